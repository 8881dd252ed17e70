"""Answers given without an answer word, read only when no anchored or lead-in letter was found.

Short replies of chat and vision-language models (tests/judges/real, MathVista) answer in plain words:
"No, the pizza is not split in half.", "∠EOD is equal to 20°.", "... is (D) snake. Snakes eat ...".
Each rule here reads one such shape, and only when it names exactly one option.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from judges.rules.extract import ends_unfinished
from judges.rules.gpqa_leadins import commits, negated, sentence_before
from judges.rules.gpqa_options import DEGREE_RE, option_starting, options_equal, options_named, tokens

# A reply that opens with "Yes"/"No" or "True"/"False" as a word of its own ("No, ...", "False.", "**Yes**").
_YES_NO_OPENING_RE = re.compile(r"[\s*_]*(?P<word>yes|no|true|false)[*_]*(?:[,.!;:]|\s*$)", re.IGNORECASE)
# The two-option pairs such an opening word picks from.
_WORD_PAIRS = (("no", "yes"), ("false", "true"))
# The predicate of a closing statement: what follows its last "is", "is equal to", "equals", "=".
_COPULA_RE = re.compile(r"(?:\b(?:(?:is|was)(?:\s+(?:also|then|therefore|thus))?(?:\s+equal\s+to)?|equals"
                        r"|(?:will|would)(?:\s+(?:most\s+)?likely)?(?:\s+be)?)\s|=|(?<!不)为|(?<!不)是)\s*",
                        re.IGNORECASE)  # "is 20°", "is also 60°", "∠MPB = 125°", "的值为 B" (not "不是 B"), "will decrease", "would be"
_EXPLAINS_RE = re.compile(r"[ \t*_]*(?:this|that|it)[ \t]+is[ \t]+(?:because|since|due|why)\b", re.IGNORECASE)
_REASON_CLAUSE_RE = re.compile(r",[ \t]+(?:as|because|since|which|due|leading|given)\b", re.IGNORECASE)
_THAT_RE = re.compile(r"that\s+", re.IGNORECASE)
# A participle before a figure's label: "indicated by A", "labelled as B", "marked C".
_MARKED_BY_RE = re.compile(r"^(?:indicated|labell?ed|marked|shown|denoted|represented)(?:[ \t]+(?:by|as|with))?[ \t]+", re.IGNORECASE)
# "... is approximately 1.57": a value stated as approximate is still that option's value.
_APPROXIMATELY_RE = re.compile(r"(?:approximately|about|around|roughly|nearly)\s+", re.IGNORECASE)
_MAX_COPULAS = 3
_MAX_REASON_CHARS = 400  # a closing sentence that gives a reason may follow the statement
_ARTICLE_RE = re.compile(r"(?:the|a|an)\s+", re.IGNORECASE)
# "(D) snake" inside a sentence: a bracketed label with text after it, not the first thing on its line; the
# label may be bold ("Therefore, ∠AOE = **(B)** 110°.").
_DOTTED_LABEL_RE = re.compile(r"(?<=[a-z,])[ \t]+(?:\*\*|__)?(?P<letter>[A-Z])\.(?:\*\*|__)?[ \t]+(?=\S)")
_PAREN_LABEL_RE = re.compile(r"(?<=[^\s(])[ \t]+(?:\*\*|__)?\((?P<letter>[A-Z])\)(?:\*\*|__)?[ \t]+(?=\S)")
# The end of a reply's first sentence: a stop before white space, or a line break.
_FIRST_STOP_RE = re.compile(r"[.!?](?=\s)|\n")
OPENING_REPLY_CHARS = 800  # an opening statement is read in short replies only, where the rest explains it
_MIN_QUOTED_WORDS = 4  # an option quoted inside a sentence must be a statement, not a word or a value
_SENTENCE_END_RE = re.compile(r"[ \t*_]*(?:[.!;]|\n|$)")
_MAX_PREDICATE_CHARS = 80
_NUMERIC_RE = re.compile(r"-?\d+(?:\.\d+)?")
# Yes/no openings and closing predicates are read in short replies only: in a long derivation, "Yes, ..."
# opens a step and "P is 30" states an intermediate value.
SHORT_REPLY_CHARS = 400
# A bracketed letter on its own after a sentence's full stop, ending its line: "... six**. (E)".
_CLOSING_BRACKET_RE = re.compile(r"(?<=[.!])[ \t*_]+\((?P<letter>[A-Z])\)[ \t*_.]*$", re.MULTILINE)
_CLOSING_BRACKET_REACH = 2000  # looked for near the end of the reply only
# The reply's last characters: a letter after a full stop ("PCR. D."), or a letter and its bracket ("of D).").
_CLOSING_LETTER_RE = re.compile(r"(?:(?P<stop>[.!][ \t]+)|(?<=[A-Za-z])[ \t])(?P<letter>[A-Z])(?:\.|(?P<bracket>\))\.?)[ \t*_]*\Z")
# An option label in running text: "D. ", "(D) ", "D) ".
ANY_LABEL_RE = re.compile(r"(?<![A-Za-z0-9])\(?([A-Z])[.)](?=[ \t]|$)")
_LIST_REACH = 40
_LIST_WORD_RE = re.compile(r"(?:\b(?:or|and)|,)[ \t]*\Z", re.IGNORECASE)
_NOT_BEFORE_RE = re.compile(r"\b(?:not|never)\b|n't|n’t", re.IGNORECASE)
_OTHER_LABEL_RE = re.compile(r"\((?-i:[A-Z])\)")  # another bracketed letter earlier in the sentence: a list
_COPULA_LABEL_RE = re.compile(r"\b(?:is|was|are|were|be)[ \t]*(?::[ \t*_]*)?[*_]*\(?(?P<letter>[A-Z])[.)][ \t*_]+")
_MAX_LABELS = 8  # bracketed labels looked at, latest first
_MAX_OPTION_CHARS = 300  # how much text after a label is compared with its option


def yes_no_opening(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The option a reply opening with "Yes"/"No" ("True"/"False") gives, when the options are that pair, perhaps with a
    third ("Not enough evidence"): a true-or-false statement answered "False. The statement is false because ..."."""
    if len(options) not in (2, 3) or len(text) > SHORT_REPLY_CHARS:
        return None  # a third option may be "Not enough evidence" beside True and False
    m = _YES_NO_OPENING_RE.match(text)
    if m is None:
        return None
    words = [" ".join(_strip_stop(tokens(o))) if tokens(o) else "" for o in options]
    word = m.group("word").lower()
    pair = next((p for p in _WORD_PAIRS if word in p), None)
    return letters[words.index(word)] if pair and all(w in words for w in pair) else None


def _strip_stop(seq: tuple[str, ...]) -> tuple[str, ...]:
    return seq[:-1] if seq[-1:] == (".",) else seq  # the option "False." is the word False


def _statement_sentence(text: str) -> tuple[str, str]:
    """The reply's closing statement and the text before it: its last sentence, or the one before that when
    the last only gives a reason ("... is the snake. This is because snakes eat ants.")."""
    body = text.rstrip()
    line = body[body.rfind("\n") + 1:]
    sentence = sentence_before(line, len(line.rstrip(".!").rstrip()))
    if _EXPLAINS_RE.match(sentence):
        before = body[:len(body) - len(line) + line.rfind(sentence)].rstrip()
        line = before[before.rfind("\n") + 1:]
        sentence = sentence_before(line, len(line.rstrip(".!").rstrip()))
        body = before
    return sentence, body[:len(body) - len(line) + line.rfind(sentence)]


def closing_predicate(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The option that is the whole predicate of a short reply's closing statement: "... is the top.",
    "∠EOD is equal to 20°.", "If the grass dies, the squirrels will decrease.", or a letter in place of a value
    ("The area ... is C."). A sentence giving the reason after it, or a reason clause, is left out."""
    sentence, before = _statement_sentence(text)
    if len(before) + len(sentence) > SHORT_REPLY_CHARS:
        # In a long derivation "P is 30" may be a step; a closing sentence that commits ("Therefore, the rate
        # is 7%, which ...") is its conclusion, and only that sentence is checked for other options' values.
        if not commits(sentence) or ends_unfinished(text):
            return None
        before = ""
    part, found = _sentence_predicate(sentence, letters, options)
    if isinstance(found, str):
        return found
    if found is None or len(found) != 1:
        return None
    if _names_another(before + part, options, found[0]):
        return None  # another option's value stated too ("... is 60°. ... is 45°. ... is 25°.")
    return letters[found[0]]


def opening_predicate(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The option that is the whole predicate of a short reply's first sentence, the rest explaining it: "The
    development that contributed most ... is the Atlantic slave trade. The image depicts ..." (Qwen-VL on MMMU,
    tests/judges/real). Read only when no other option's text appears anywhere in the reply."""
    body = text.strip()
    if len(body) > OPENING_REPLY_CHARS or ends_unfinished(body):
        return None  # a reply cut off mid-derivation may open by restating what the question gives
    stop = _FIRST_STOP_RE.search(body)
    if stop is None:
        return None  # one sentence: closing_predicate's case
    _, found = _sentence_predicate(body[:stop.start()], letters, options)
    if not isinstance(found, list) or len(found) != 1:
        return None
    if _names_another(body, options, found[0]):
        return None
    return letters[found[0]]


def opening_line_option(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The option whose whole text is a reply's first line, the lines after it explaining: "Soft\n\nThe Soft line
    stays highest ..." (InternVL3 on MathVista, tests/judges/real). Read only in a short reply where no other
    option's text appears."""
    body = text.strip()
    if len(body) > OPENING_REPLY_CHARS or "\n" not in body:
        return None  # one line: the bare-reply rules' case
    named = options_equal(body[:body.find("\n")].strip(" \t*_.:"), options)
    if len(named) != 1:
        return None
    found = named.pop()
    if _names_another(body, options, found):
        return None
    return letters[found]


def opening_quote(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """The option whose whole text, a statement of several words, a short reply's first sentence carries: "The
    cartoon makes the point that <option B's words>. The cartoon depicts ..." (Qwen-VL on MMMU,
    tests/judges/real). Read only when no other option's text appears anywhere in the reply."""
    body = text.strip()
    if len(body) > OPENING_REPLY_CHARS or ends_unfinished(body):
        return None
    stop = _FIRST_STOP_RE.search(body)
    sentence = body[:stop.start() + 1] if stop else body
    if negated(sentence) or any(m.group(1) in letters for m in ANY_LABEL_RE.finditer(sentence)):
        return None  # a labelled statement ("... like D. Monks in ...") is the label rules' to read
    named = options_named(sentence, options)
    if len(named) != 1:
        return None
    found = named.pop()
    if sum(t.isalpha() for t in tokens(options[found])) < _MIN_QUOTED_WORDS:
        return None  # a word or two inside a sentence is a mention, not a statement of the answer
    if _names_another(body, options, found):
        return None
    return letters[found]


def _sentence_predicate(sentence: str, letters: Sequence[str], options: Sequence[str]) -> tuple[str, list[int] | str | None]:
    """The part of the sentence read and what its predicate names: the whole sentence first, then without the reason
    a clause adds ("..., as it is prey for deer and wolf")."""
    reason = _REASON_CLAUSE_RE.search(sentence)
    for part in (sentence, sentence[:reason.start()]) if reason else (sentence,):
        found = _predicate_options(part, letters, options)
        if found is not None:
            return part, found
    return part, None


def _predicate_options(sentence: str, letters: Sequence[str], options: Sequence[str]) -> list[int] | str | None:
    """The options a sentence's predicate is (after its last copula, or an earlier one when that names none:
    "is that grasshoppers will decrease"), a letter standing for a value, or None (no copula, or negated)."""
    copulas = list(_COPULA_RE.finditer(sentence))[-_MAX_COPULAS:]
    found = None
    for last in reversed(copulas):
        rest = _THAT_RE.sub("", sentence[last.end():].strip(" \t*_"), count=1)
        rest = _APPROXIMATELY_RE.sub("", rest, count=1) if _APPROXIMATELY_RE.match(rest) else rest
        if len(rest) > _MAX_PREDICATE_CHARS or negated(rest):
            return None
        label = _MARKED_BY_RE.sub("", rest, count=1)  # "... is indicated by A.": a label in the figure
        if label in letters:
            return label  # "... is C." (upper case only: "is a" is an article)
        said = _without_article(rest)
        found = [i for i, o in enumerate(options) if tokens(o) and _without_article(o) == said]
        if not found and said:
            # "the superior lobe" for the option "Superior lobes": the last word's plural is the same answer
            found = [i for i, o in enumerate(options) if tokens(o) and _singular(_without_article(o)) == _singular(said)]
        if not found and len(said) >= 2 and said[-1].isalpha():
            # "... is 135 degrees.": a number option followed by its unit word
            found = [i for i, o in enumerate(options) if _NUMERIC_RE.fullmatch(o.strip()) and tokens(o) == said[:-1]]
        if found:
            return found
    return None


def _singular(seq: tuple[str, ...]) -> tuple[str, ...]:
    """The tokens with a plural "s" taken off the last word ("lobes" -> "lobe"; "gas", "class" stay)."""
    last = seq[-1] if seq else ""
    if len(last) > 3 and last.endswith("s") and not last.endswith("ss") and last.isalpha():
        return (*seq[:-1], last[:-1])
    return seq


def _names_another(text: str, options: Sequence[str], found: int) -> bool:
    """Whether the text states another option's words than the one found (articles aside)."""
    said = tokens(text)
    return any(_contains(said, _without_article(o)) for i, o in enumerate(options) if i != found and tokens(o))


def _contains(seq: tuple[str, ...], part: tuple[str, ...]) -> bool:
    n = len(part)
    return n > 0 and any(seq[i:i + n] == part for i in range(len(seq) - n + 1))


def _without_article(text: str) -> tuple[str, ...]:
    return tokens(_ARTICLE_RE.sub("", text.strip(), count=1) if _ARTICLE_RE.match(text.strip()) else text)


def zh_conclusion(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """A Chinese reply's closing conclusion naming a letter with no answer marker: "综上所述，正确的叙述是 B。", "因此，错误的
    说法是B。" (GPT-3.5-turbo on GAOKAO-Bench when it drops the 【答案】 template, tests/judges/real)."""
    m = _ZH_CONCLUSION_RE.search(text, max(0, len(text) - _ZH_CONCLUSION_REACH))
    return m.group("letter") if m and m.group("letter") in letters else None


_ZH_CONCLUSION_RE = re.compile(r"(?:综上所述|综上|因此|所以|总之)[，,]?[^。\n]{0,40}?(?<!不)(?:是|为)[ \t]*[(（]?(?P<letter>[A-Z])[)）]?"
                               r"[ \t]*[。.]?[ \t]*\Z")
_ZH_CONCLUSION_REACH = 120


def closing_letter(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """A lone letter that ends the reply after a full stop ("... by PCR. D.") or closes its last sentence with its
    label's bracket ("... lowering the world's amount of D)."): Flan-T5 and other models prompted with "A) ..." option
    lines and no answer format (ThoughtSource, tests/judges/real)."""
    text = text.rstrip()
    m = _CLOSING_LETTER_RE.search(text, max(0, len(text) - 8))
    if m is None or m.group("letter") not in letters:
        return None
    if m.group("stop"):
        return m.group("letter")
    before = text[max(0, m.start("letter") - _LIST_REACH):m.start("letter")]
    if not m.group("bracket") or before.rfind("(") > before.rfind(")") or _LIST_WORD_RE.search(before):
        return None  # "... the appropriate option (A, B, C, D, or E).": the letters listed, none chosen
    return m.group("letter")


def closing_bracket(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """ "So the time is **quarter past six**. (E)": a bracketed letter alone after a committing sentence."""
    found = None
    for found in _CLOSING_BRACKET_RE.finditer(text, max(0, len(text) - _CLOSING_BRACKET_REACH)):
        pass
    if found is None or found.group("letter") not in letters:
        return None
    return found.group("letter") if commits(sentence_before(text, found.start() - 1)) else None


def label_with_own_text(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """ "... is (D) snake." in prose: a bracketed letter (or, near the end, "D." after a word) followed by its own
    option's text, closing the clause.

    The last such pair decides; a list of options (each label opening its line) is never read. Only the
    last few bracketed labels are looked at, so a long run of them costs a bounded amount.
    """
    found = list(_PAREN_LABEL_RE.finditer(text))
    # "... comparable to D. Factory workers in ...": an unbracketed label inside a sentence, near the end only
    found += list(_DOTTED_LABEL_RE.finditer(text, max(0, len(text) - _CLOSING_BRACKET_REACH)))
    found.sort(key=lambda m: m.start())
    for m in reversed(found[-_MAX_LABELS:]):
        letter = m.group("letter")
        if letter not in letters:
            continue
        own = letters.index(letter)
        rest = text[m.end():m.end() + _MAX_OPTION_CHARS].split("\n", 1)[0]
        if option_starting(rest, options) != own or not _closes_after_option(rest, options[own]):
            continue
        # Only the words right before the label may negate it: the sentence often restates a question's
        # condition first ("... if the ants were fewer is (D) snake.").
        before = sentence_before(text, m.start())
        after = rest[len(options[own]):].split(".", 1)[0]
        if _NOT_BEFORE_RE.search(before[-30:]) or _OTHER_LABEL_RE.search(before) or _OTHER_LABEL_RE.search(after):
            continue
        return letter
    return None


def label_after_copula(text: str, letters: Sequence[str], options: Sequence[str]) -> str | None:
    """ "The outcome that followed was H. <text of option H>.": a copula, then a label with its own option's text.

    The last such pair near the end decides, unless its sentence negates it."""
    found = list(_COPULA_LABEL_RE.finditer(text, max(0, len(text) - _CLOSING_BRACKET_REACH)))
    for m in reversed(found[-_MAX_LABELS:]):
        letter = m.group("letter")
        if letter not in letters:
            continue
        rest = text[m.end():m.end() + _MAX_OPTION_CHARS].split("\n", 1)[0]
        if option_starting(rest, options) != letters.index(letter) or _OTHER_LABEL_RE.search(rest):
            continue  # another option's text, or a second label on the line ("are: (B) ... and (D) ...")
        if not negated(sentence_before(text, m.start())):
            return letter
    return None


def _closes_after_option(rest: str, option: str) -> bool:
    """Whether the option's text, at the start of rest, ends its sentence or clause there."""
    want = tokens(option)
    for cut in range(1, len(rest) + 1):
        got = tokens(rest[:cut])
        if got == want and not rest[cut:cut + 1].isalnum():
            degree = DEGREE_RE.match(rest, cut)  # "(B) 110°.": the degree sign belongs to the value
            cut = degree.end() if degree else cut
            return _SENTENCE_END_RE.match(rest, cut) is not None or rest[cut:cut + 1] in ",)"
        if len(got) > len(want):
            return False
    return False
