"""GPQA answers stated without an "answer" keyword: after a lead-in ("the correct product is:"), as a
label line, or as a parenthesised letter after the option text ("... but-2-enal (Option C)")."""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator
from typing import TypeVar

from judges.rules.deadline import Deadline
from judges.rules.extract import ends_unfinished
from judges.rules.gpqa_reach import GATED_CHARS, Spans, letter_reach
from judges.rules.vocabulary import ANSWER_WORDS, alternation

T = TypeVar("T")
CHECK_EVERY = 256  # positions examined between two looks at the clock

# A copula or colon that can introduce the chosen option ("The process taking place is:", "... is **C. x**").
_COLON_RE = re.compile(":")
_LEAD_WORDS = ("is", "are", "was", "be", "remains", "es", "est", "ist", "lautet")
# What may stand between a lead-in and the letter: bold, up to three line breaks, a bullet, wrappers.
# No two whitespace quantifiers may meet (each is followed by a required non-space or ends the match):
# overlapping ones made a run of 245,000 spaces take minutes to match.
_LABEL_AT_RE = re.compile(
    r"[ \t]*(?:(?:\*\*|__)[ \t]*)?(?::[ \t]*)?(?P<nl>(?:\n[ \t>]*){0,3})(?:[-+•][ \t]+)?"
    r"(?P<wrap>(?:(?:\*\*|__|\$|\\boxed\{|\\textbf\{|\\text\{|[(\[«“])[ \t]*)*)"
    r"(?:(?:option|choice|Option|Choice)[ \t]+)?\(?(?P<letter>[A-Z])"
    r"(?P<label>\)?(?:\*\*|__)?[ \t]*(?:[.):]|[-–—](?=[ \t])|(?=(?:(?:\*\*|__)[ \t]*)?$))|\)|\*\*|__|\}|»|”)",
    re.MULTILINE,
)
# What _LABEL_AT_RE may pass over before its letter, other than \boxed{-style commands and option words
# (a backslash or "option"/"choice" where the skip stops keeps the candidate).
_LABEL_GAP_CAP = 64
_LABEL_GAP_RE = re.compile(r"[ \t*_:\n>+•$(\[«“-]{0,%d}" % _LABEL_GAP_CAP)
# A line that labels one option: "C. text", "**C) text**", "- (C): text".
LABEL_LINE_RE = re.compile(
    r"^[ \t>]*(?P<bullet>[-+•*][ \t]+)?(?:(?P<bold>\*\*|__)[ \t]*)?(?P<paren>\()?(?P<letter>[A-Z])(?P<punct>\)|\.|:)"
    r"(?:\*\*|__)?[ \t]+\S[^\n]*$",
    re.MULTILINE,
)
_LABEL_MARK_RE = re.compile(r"[A-Z][).:]")
# Words that show a sentence commits to a choice, and words that show it does not.
_COMMIT_WORDS = ("correct", "right", "best", "closest", "final", "finally", "likely", "plausible", "appropriate",
                 "therefore", "thus", "hence", "so", "overall", "conclusion", "conclude", "product", "choice", "option",
                 "pick", "verdict", "selection", "match", "matches", "consistent", "correspond", "corresponds",
                 "among the options", "among the choices", "of the options given",
                 *ANSWER_WORDS, "donc", "daher", "also", "por lo tanto")
_COMMIT_RE = re.compile(r"\b" + alternation(_COMMIT_WORDS).replace(r"\ ", r"\s+") + r"\b", re.IGNORECASE)
_NEGATION_RE = re.compile(
    r"\b(?:not|never|unlikely|incorrect|wrong|if|whether|unless|rather|instead|unlike|except|nor|ruled?|eliminate[sd]?)\b|n't|n’t",
    re.IGNORECASE,
)
# The subject of a "which is false / the exception" question, right before its "is":
# "The incorrect statement is (A).", "The odd one out is (C).", "the exception is B".
_ASKED_FOR_RE = re.compile(
    r"\b(?:(?:false|incorrect|wrong|untrue|invalid|inaccurate|odd|weakest|strongest|least\s+likely)[ \t]+"
    r"(?:statement|option|choice|one|assertion|claim|answer|argument)|exception|odd[ \t]+one[ \t]+out)[ \t*_]*$",
    re.IGNORECASE)
# A parenthesised letter closing a statement: "... but-2-enal (Option C)." / "... methyl acetate (A)."
_PAREN_LETTER_RE = re.compile(
    r"(?:(?P<paren>\()(?:(?:option|choice|Option|Choice)\s+)?"
    r"|[,;—–-][ \t]*(?:which[ \t]+is[ \t]+|i\.e\.,?[ \t]+)?(?:option|choice|Option|Choice)[ \t]+)"
    r"(?P<letter>[A-Z])(?(paren)\))(?=[ \t*_]*(?:[.!;]|$))", re.MULTILINE)
# "This matches option A", "corresponds to option B", "aligns with answer choice E", "I'll go with C": tried only where a
# verb was found.
_VERBS = ("match", "correspond", "consistent", "align", "closest to", "go with", "going with", "choos", "select", "pick",
          "settle", "think", "believe", "guess",
          "i.e.", "namely", "which is", "that is", "is option", "is choice", "is letter")
_VERB_OPTION_RE = re.compile(
    r"(?:match(?:es|ed)?|correspond(?:s|ing)?\s+to|consistent\s+with|align(?:s|ed)?\s+with|closest\s+to|go(?:ing)?\s+with|choose|choosing|select(?:ing)?|"
    r"pick(?:ing)?|settle\s+on|(?:think|believe|guess)\s+(?:that\s+)?it(?:'s|’s|\s+is|\s+must\s+be|\s+should\s+be)|"
    r"i\.e\.,?|namely|which\s+is|that\s+is|is(?=\s+(?:option|choice|letter)\b))\s+(?:the\s+)?(?:(?:correct|best|closest|right|final)\s+)?"
    r"(?:(?:answer\s+)?(?:option|choice|letter)\s+)?[*_(\[\"“]*(?P<letter>[A-Z])(?![A-Za-z0-9])(?![*_)\]\"”]*\s*(?:or|and|/|&|,)\s*[*_(\[]*[A-Z]\b)",
    re.IGNORECASE,
)
# "A is right", "Option C is the answer", "so, (C) it is": the letter first, then the verdict on it, read
# backwards from the verdict word. The letter must open its clause, so "Vitamin A is the correct cofactor"
# and "Hepatitis B is the most likely diagnosis" are not answers.
_VERDICTS = ("correct", "right", "best", "likely", "plausible", "closest", "answer", "it is", "the one")
_VERDICT_AT_RE = re.compile(
    r"(?:(?:correct|right|best|likely|plausible)\b(?:\s+(?:answer|option|choice|one))?|answer\b"
    r"|closest(?=[ \t*_]*(?:[.!,;]|$)|\s+(?:correct\s+)?(?:answer|option|choice|match|one|value)\b)"  # "A is the closest."
    r"|the\s+one(?=[ \t*_]*(?:[.!]|$)))"  # "C is the one." (not "the one with the lowest energy")
    r"(?!\s+(?:only|if|when|unless|under|for|in)\b)")
_LETTER_IS_RE = re.compile(
    r"(?P<lead>(?:[Oo]ption|[Cc]hoice|[Tt]he\s+(?:answer|statement))\s+)?\(?(?P<letter>[A-Z])\)?(?:\*\*|__)?"
    r"(?:(?<=\))[ \t]+[-+$]?\d[\d.,/%]{0,12})?\s+is\s+"  # "option A) 28 is the closest": the option's value may follow
    r"(?:the\s+)?(?:most\s+)?$")
_MAKES_LETTER_RE = re.compile(r"\b(?i:makes?|making)[ \t]+(?:(?i:answer)[ \t]+)?(?:(?i:option|choice)[ \t]+)?\(?(?P<letter>[A-Z])\)?"
                              r"[ \t]+(?i:the)[ \t]+$")
_PRAISED_ANSWER_RE = re.compile(r"\bis[ \t]+the[ \t]+(?:most[ \t]+)?(?P<praise>(?:[a-z]+,?[ \t]+(?:and[ \t]+)?){1,3})$")
_DISPRAISE_RE = re.compile(r"\b(?:wrong|incorrect|false|worst|least|bad|poor|invalid|unlikely|weakest|less|wors[et])\b")
_SO_LETTER_RE = re.compile(r"\b(?i:so|then|thus)[,\s]+\(?(?P<letter>[A-Z])\)?\s+$")
_CLAUSE_OPENERS_RE = re.compile(r"(?:^|[.!?:;,>]\s+|[\n(*]|\b(?i:so|thus|hence|therefore|clearly|overall)\s+)$")
_OPTION_WORD_RE = re.compile(r"(?:option|choice|letter)\s+[*_(\[]*[A-Za-z](?![A-Za-z0-9])$", re.IGNORECASE)
_CHOOSER_RE = re.compile(r"(?:\bi(?:'ll|’ll|'m|’m|'d|’d| will| would| am)?|\bwe(?:'ll|’ll|'re|’re| will| are)?|let's|let’s|"
                         r"\bso|\bthus|\btherefore)\s+$",
                         re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.!?][\"'”’]?(?=\s)|\n")  # a closing quote may follow the stop
_SPACES_RE = re.compile(r"\s*")
_REACH = 80  # how far before its letter a lead-in phrase may begin
Candidate = tuple[int, int, str, str]  # (letter position, end of the phrase, letter, how it was found)
LABEL_TAIL_CHARS = 200  # "(B) ethyl acetate": the words after an opening label name its option, they do not reason
LIST_WINDOW_LINES = 6  # a label line with another letter this close means a list of options, not a choice
LIST_WINDOW_CHARS = 3000  # and no farther than this, so each check costs a bounded amount


def checked(items: Iterable[T], deadline: Deadline | None) -> Iterator[T]:
    """The items, with the sample's time limit checked every CHECK_EVERY of them (SampleTimeout past it)."""
    if deadline is None:
        yield from items
        return
    for i, item in enumerate(items):
        if i % CHECK_EVERY == 0:
            deadline.check("reading the answer")
        yield item


def _shape(m: re.Match) -> tuple[bool, bool, bool, str]:
    """How a label line is written: bullet, bold, opening parenthesis, closing mark."""
    return bool(m.group("bullet")), bool(m.group("bold")), bool(m.group("paren")), m.group("punct")


SENTENCE_LIMIT = 300  # longest sentence looked back over from a candidate


def sentence_before(text: str, pos: int, limit: int = SENTENCE_LIMIT) -> str:
    """The sentence (or line) that ends at pos, at most limit characters of it."""
    start = max(0, pos - limit)
    last = None
    for last in _SENTENCE_END_RE.finditer(text, start, pos):
        pass
    return text[last.end() if last else start:pos]


def _last_clause(sentence: str) -> str:
    """The clause a negation must be in to undo what the sentence says: the one after its last "but" or "however"
    ("The answer is not among the choices, but the closest is (B)"), or after ", so" when that clause commits ("... is
    not the leading cause, so the leading cause among the options is D"), without a reason clause opening it."""
    last = None
    for last in _CONTRAST_RE.finditer(sentence):
        pass
    clause = sentence[last.end():] if last else sentence
    concluding = None
    for concluding in _CONCLUDES_RE.finditer(clause):
        pass
    if concluding and _COMMIT_RE.search(clause, concluding.end()):
        clause = clause[concluding.end():]
    reason = _REASON_OPENS_RE.match(clause)
    return clause[reason.end():] if reason else clause


_CONTRAST_RE = re.compile(r"\b(?:but|however)\b", re.IGNORECASE)
_CONCLUDES_RE = re.compile(r"[,;][ \t]*(?:so|therefore|thus|hence)\b", re.IGNORECASE)
# A reason clause that opens the sentence: its negation is about the reason, not the choice that follows
# ("Since the question does not allow multiple answers, we choose (D).").
_REASON_OPENS_RE = re.compile(r"[\s,*_]*(?:since|because|as|given[ \t]+that|considering[ \t]+that)\b[^,.;:!?\n]{1,200},",
                              re.IGNORECASE)


def negated(sentence: str) -> bool:
    """A sentence whose last clause negates or conditions what it says ("not", "if", "rather than", "instead")."""
    return _NEGATION_RE.search(_last_clause(sentence)) is not None


# A sentence with no commitment word is skipped with fast substring searches first (the alternation,
# tried at every position, costs ~150 us on a 300-character sentence).
_COMMIT_STEMS = tuple({word.split()[0] for word in _COMMIT_WORDS})


def commits(sentence: str) -> bool:
    """A sentence that states a choice: a commitment word and no negation or condition."""
    low = sentence.lower()
    if not any(stem in low for stem in _COMMIT_STEMS):
        return False
    return _COMMIT_RE.search(sentence) is not None and not negated(sentence)


class Sentences:
    """Sentence starts and commitment words of a text, found in one pass each, so that a rule looking at
    thousands of candidates asks two bisects per candidate instead of rescanning 300 characters each time."""

    def __init__(self, text: str, low: str, start: int = 0) -> None:
        self.text = text
        origin = self.origin = max(0, start - SENTENCE_LIMIT - _REACH)
        hits = []
        for stem in _COMMIT_STEMS:
            p = low.find(stem, origin)
            while p >= 0:
                hits.append(p)
                p = low.find(stem, p + 1)
        hits.sort()
        self.commit_hits = hits

    @functools.cached_property
    def ends(self) -> list[int]:
        """Where each sentence (or line) ends; found only when a candidate needs it."""
        return [m.end() for m in _SENTENCE_END_RE.finditer(self.text, self.origin)]

    def start_of(self, pos: int) -> int:
        """Where the sentence ending at pos starts (as sentence_before finds it)."""
        i = bisect.bisect_right(self.ends, pos) - 1
        low_bound = max(0, pos - SENTENCE_LIMIT)
        return self.ends[i] if i >= 0 and self.ends[i] > low_bound else low_bound

    def before(self, pos: int) -> str:
        return self.text[self.start_of(pos):pos]

    def commits(self, pos: int) -> bool:
        """Whether the sentence ending at pos commits to a choice (commits()), skipping sentences with no
        commitment word by a bisect."""
        start = self.start_of(pos)
        i = bisect.bisect_left(self.commit_hits, start)
        if i == len(self.commit_hits) or self.commit_hits[i] >= pos:
            return False
        return commits(self.text[start:pos])


class _OnUse:
    """A value of each label line (its letter, its shape), worked out when first asked for."""

    def __init__(self, text: str, starts: list[int], value) -> None:
        self.text = text
        self.starts = starts
        self.value = value
        self.known: dict[int, object] = {}

    def __getitem__(self, j: int):
        if j not in self.known:
            self.known[j] = self.value(LABEL_LINE_RE.match(self.text, self.starts[j]))
        return self.known[j]


class LabelLines:
    """Every option-label line of a text, so list checks are a bisect, not a rescan."""

    def __init__(self, text: str, start: int = 0) -> None:
        self.text = text
        origin = max(0, start - LIST_WINDOW_CHARS)
        if len(text) <= GATED_CHARS:  # a few lines: each read once
            self.starts: list[int] = []
            self.letters: list[str] | _OnUse = []
            self.shapes: list[tuple[bool, bool, bool, str]] | _OnUse = []
            for m in LABEL_LINE_RE.finditer(text, origin):
                self.starts.append(m.start())
                self.letters.append(m.group("letter"))
                self.shapes.append(_shape(m))
            return
        # Every label line holds a capital and its mark ("C.", "C)", "C:"); without one, no line is scanned.
        # Only where lines start is kept (a match object per line costs more than finding the lines); a line's
        # letter and shape come from matching it again when a check asks (a line matches alone, wherever
        # the scan began).
        self.starts = [m.start() for m in LABEL_LINE_RE.finditer(text, origin)] \
            if _LABEL_MARK_RE.search(text, origin) else []
        self.letters = _OnUse(text, self.starts, lambda m: m.group("letter"))
        self.shapes = _OnUse(text, self.starts, _shape)

    def in_list(self, pos: int, letter: str, before: bool = True) -> bool:
        """Whether the label at pos belongs to a list of options rather than stating one.

        A list: the very next line labels another letter, or another letter's label written the same
        way ("**B. x**" after "**A. x**") follows within a few lines. A differently written list after
        an answer ("C. x" then "- (A) x: wrong") is the explanation, not part of the answer.
        """
        m = LABEL_LINE_RE.match(self.text, self.text.rfind("\n", max(0, pos - LIST_WINDOW_CHARS), pos) + 1)
        shape = _shape(m) if m else None
        i = bisect.bisect_right(self.starts, pos)
        for j in range(i, min(len(self.starts), i + 3)):
            if self.starts[j] - pos > LIST_WINDOW_CHARS or self.text.count("\n", pos, self.starts[j]) > LIST_WINDOW_LINES:
                break
            next_line = self.text.find("\n", pos, self.starts[j])
            adjacent = next_line >= 0 and not self.text[next_line:self.starts[j]].strip()
            if self.letters[j] != letter and (adjacent or self.shapes[j] == shape):
                return True
        if before:
            line_start = self.text.rfind("\n", max(0, pos - LIST_WINDOW_CHARS), pos) + 1
            k = bisect.bisect_left(self.starts, line_start) - 1
            for j in range(k, max(-1, k - 3), -1):
                if line_start - self.starts[j] > LIST_WINDOW_CHARS or \
                        self.text.count("\n", self.starts[j], line_start) > LIST_WINDOW_LINES:
                    break
                if self.letters[j] != letter:
                    return True
        return False


def word_spans(low: str, words: tuple[str, ...], start: int = 0, whole: bool = False,
               end: int | None = None) -> list[tuple[int, int]]:
    """Where each word occurs at a word start (and end, if whole), starting at most at end: one C-speed find
    loop per word.

    Far faster than one regex alternation scanned over the text, which Python's re tries at every position
    (and than a pattern with a lookbehind, which re cannot search for as a literal).
    """
    spans = []
    for word in words:
        n = len(word)
        stop = len(low) if end is None else end + n
        p = low.find(word, start, stop)
        while p >= 0:
            before = low[p - 1] if p else " "
            after = low[p + n:p + n + 1] if whole else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                spans.append((p, p + n))
            p = low.find(word, p + 1, stop)
    return spans


GATED_FROM = 64  # lead-in or verdict words in a text before only those gpqa_reach keeps are looked at


def _from(spans: Spans, start: int) -> Spans:
    """The part of the spans from start on."""
    return [(max(lo, start), hi) for lo, hi in spans if hi >= start]


# Each rule below yields its candidates from the end of the text backwards, so the reader takes only the
# first (the last in the text) and a long response costs one pass, not one check per occurrence.


# A line of a walk through the options: "- **Option B:** True. ...", "Choice C - wrong because ...".
_WALK_LINE_RE = re.compile(r"\n[ \t]*(?:[-*•][ \t]+)?(?:\*\*|__)?(?i:option|choice)[ \t]+\(?(?P<letter>[A-Z])\b")
_WALK_REACH = 600  # how far after the line the next option's line is looked for


def _walks_options(text: str, at: int, letter: str, valid: set[str]) -> bool:
    """Whether the letter at `at`, named as "Option X", is followed by another option's line: a walk through the
    options ("**Step-by-Step Explanation:**\n- **Option A:** True.\n- **Option B:** True. ..."), not a choice."""
    if not text[max(0, at - 40):at].lower().rstrip(" \t*_(").endswith(("option", "choice")):
        return False
    nxt = _WALK_LINE_RE.search(text, at, at + _WALK_REACH)
    return nxt is not None and nxt.group("letter") in valid and nxt.group("letter") != letter


def after_leadin(text: str, low: str, valid: set[str], labels: LabelLines, start: int = 0,
                 deadline: Deadline | None = None) -> Iterator[Candidate]:
    """Letters right after a lead-in: on the next line ("... is:\\n\\nC. text") or after a committing phrase.

    Only letters from start on are wanted (an earlier one cannot be the last answer); a lead-in may
    begin a little before start.
    """
    start = max(0, start - _REACH)
    if len(low) > GATED_CHARS and sum(low.count(word, start) for word in _LEAD_WORDS) + low.count(":", start) > GATED_FROM:
        spans = _from(letter_reach(text).forward_two_colons, start)  # only lead-ins a letter can follow
        leads = [span for lo, hi in spans for span in word_spans(low, _LEAD_WORDS, lo, whole=True, end=hi)] + \
            [(m.start(), m.end()) for lo, hi in spans for m in _COLON_RE.finditer(low, lo, hi + 1)]
    else:
        leads = word_spans(low, _LEAD_WORDS, start, whole=True) + \
            [(m.start(), m.end()) for m in _COLON_RE.finditer(low, start)]
    leads.sort(reverse=True)
    for lead_start, lead_end in checked(leads, deadline):
        gap = _LABEL_GAP_RE.match(text, lead_end).end()
        if gap - lead_end < _LABEL_GAP_CAP and text[gap:gap + 1] not in valid and text[gap:gap + 1] != "\\" \
                and not low.startswith(("option", "choice"), gap):
            continue  # what follows the lead-in cannot lead to a letter (exact: the gap holds only what the
            # pattern may skip, and it stops at a letter, a backslash command or an "option"/"choice" word)
        m = _LABEL_AT_RE.match(text, lead_end)
        if not m or m.group("letter") not in valid:
            continue
        if m.group("nl"):
            # The lead-in ends its line: the next line states the choice, unless it opens a list of options.
            if labels.in_list(m.start("letter"), m.group("letter"), before=False) or \
                    _walks_options(text, m.start("letter"), m.group("letter"), valid):
                continue
            yield m.start("letter"), m.end(), m.group("letter"), "lead-in line"
            continue
        before = sentence_before(text, lead_start)
        if not commits(before) and not _ASKED_FOR_RE.search(before):
            continue
        if labels.in_list(m.start("letter"), m.group("letter"), before=False):
            continue
        yield m.start("letter"), m.end(), m.group("letter"), "lead-in"


def verb_phrases(text: str, low: str, valid: set[str], start: int = 0,
                 deadline: Deadline | None = None) -> Iterator[Candidate]:
    """"This matches option A", "corresponds to option B", "I'll go with C"."""
    for p, _ in checked(sorted(word_spans(low, _VERBS, max(0, start - _REACH)), reverse=True), deadline):
        m = _VERB_OPTION_RE.match(text, p)
        if not m:
            continue
        letter = m.group("letter")
        if letter not in valid and not (letter.upper() in valid and _OPTION_WORD_RE.search(text, m.start(), m.end())):
            continue
        verb = m.group().split(None, 1)[0].lower()
        if verb in ("choose", "choosing", "select", "selecting", "pick", "picking", "go", "going", "settle",
                    "think", "believe", "guess"):
            if not _CHOOSER_RE.search(text, max(0, m.start() - 20), m.start()):
                continue  # "choose A if ..." in an instruction, not the model's choice
        elif not _OPTION_WORD_RE.search(text, m.start(), m.end()) and verb not in ("match", "matches", "matched"):
            continue  # "which is C" without the word option is too loose
        if negated(sentence_before(text, m.start("letter"))):
            continue
        yield m.start("letter"), m.end(), letter.upper(), "option phrase"


def _ends_with_is(low: str, p: int) -> bool:
    """Whether the words before p end "is", "is the", "is most" or "is the most" (when fewer than three
    words fit in the window, say yes and let the pattern decide)."""
    words = low[max(0, p - 24):p].split()[-3:]
    if len(words) < 3:
        return True
    if words[-1] == "most":
        words.pop()
    if words[-1] == "the":
        words.pop()
    return words[-1] == "is"


def letter_verdicts(text: str, low: str, valid: set[str], start: int = 0,
                    deadline: Deadline | None = None) -> Iterator[Candidate]:
    """"A is right", "Option C is the answer", "so, (C) it is"."""
    if len(low) > GATED_CHARS and sum(low.count(word, start) for word in _VERDICTS) > GATED_FROM:
        spans = _from(letter_reach(text).backward, start)  # only verdict words a letter comes close before
        verdicts = [span for lo, hi in spans for span in word_spans(low, _VERDICTS, lo, end=hi)]
    else:
        verdicts = word_spans(low, _VERDICTS, start)
    for p, _ in checked(sorted(verdicts, reverse=True), deadline):
        if low.startswith("it is", p):
            before = _SO_LETTER_RE.search(text, max(0, p - 20), p)
        elif _VERDICT_AT_RE.match(low, p):
            made = _MAKES_LETTER_RE.search(text, max(0, p - 40), p)
            if made:  # "This makes option D the correct answer."
                if made.group("letter") in valid and not negated(sentence_before(text, made.start("letter"))):
                    yield made.start("letter"), p, made.group("letter"), "letter verdict"
                continue
            at = p
            if not _ends_with_is(low, p):
                # "Option E is the most accurate and comprehensive answer.": words that praise it may come between
                praised = _PRAISED_ANSWER_RE.search(low, max(0, p - 70), p) if low.startswith("answer", p) else None
                if praised is None or _DISPRAISE_RE.search(praised.group()):
                    continue  # "A is (the) (most) right": no "is" right before the verdict word
                at = praised.start("praise")
            before = _LETTER_IS_RE.search(text, max(0, at - 40), at)
            if before and not before.group("lead") and not _CLAUSE_OPENERS_RE.search(
                    text, max(0, before.start() - 12), before.start()):
                continue
        else:
            continue
        if before and before.group("letter") in valid and not negated(sentence_before(text, before.start("letter"))):
            yield before.start("letter"), p, before.group("letter"), "letter verdict"


FEW_OPENERS = 64  # up to this many "(" and option words, each candidate is looked at directly


def parenthesised(text: str, low: str, valid: set[str], start: int = 0,
                  deadline: Deadline | None = None) -> Iterator[Candidate]:
    """"... is X (Option C)." in a committing sentence, or a line that is only "**X (C)**"."""
    origin = max(0, start - _REACH)
    openers = text.count("(", origin) + low.count("option", origin) + low.count("choice", origin)
    if not openers:
        return  # every parenthesised letter opens with "(" or an option word
    text_end = len(text.rstrip())
    # Few places a parenthesised letter could be: look at each. Many: only where one could count.
    sentences = Sentences(text, low, start) if openers > FEW_OPENERS else None
    windows = [(origin, len(text))] if sentences is None or openers <= len(sentences.commit_hits) else \
        _windows(low, sentences, origin, text_end)
    for lo, hi in reversed(windows):
        found = []
        for m in _PAREN_LETTER_RE.finditer(text, lo):
            if m.start() >= hi:
                break
            if m.group("letter") in valid:
                found.append(m)
        for m in checked(reversed(found), deadline):
            before = sentences.before(m.start()) if sentences else sentence_before(text, m.start())
            committed = sentences.commits(m.start()) if sentences else commits(before)
            line = before.lstrip(" \t")
            if before.strip(" \t*_") and (committed or line.startswith(("**", "__")) and "\n" not in before
                                           or _closes_response(text, text_end, m, before)):
                yield m.start("letter"), m.end(), m.group("letter"), "parenthesised"


def _windows(low: str, sentences: Sentences, start: int, text_end: int) -> list[tuple[int, int]]:
    """Where a parenthesised letter can be read: after a commitment word or a bold mark (within one
    sentence's reach), and at the end of the text; merged and in order. Text outside them holds no
    candidate worth a look, so a megabyte of "x (C); " is not examined letter by letter."""
    spans = [(p, p + SENTENCE_LIMIT) for p in sentences.commit_hits if p >= start - SENTENCE_LIMIT]
    for mark in ("**", "__"):
        p = low.find(mark, max(0, start - SENTENCE_LIMIT))  # a bold line may open before start
        while p >= 0:
            spans.append((p, p + SENTENCE_LIMIT + SENTENCE_LIMIT // 2))  # covers the marks in its first half
            p = low.find(mark, p + SENTENCE_LIMIT // 2)
    spans.append((max(start, text_end - SENTENCE_LIMIT), text_end + 1))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        lo = max(lo, start)
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        elif hi > lo:
            merged.append((lo, hi))
    return merged


# Words that keep a closing "... (C)." from being a choice: a negation or condition in its last clause.
# ("except" and "rather" stay allowed: "all of the following except (E)." answers an "except" question.)
_CLOSING_NEGATION_RE = re.compile(r"\b(?:not|never|unlikely|incorrect|wrong|if|whether|unless|nor)\b|n't|n’t"
                                  r"|\((?-i:[A-Z])\)", re.IGNORECASE)  # another letter too: "(A) and (B)."
_CLOSING_TAIL_RE = re.compile(r"[ \t*_]*(?:[.!][ \t*_]*)?")


def _closes_response(text: str, text_end: int, m: re.Match, before: str) -> bool:
    """ "The odd one out is (C)." as the response's last sentence: a statement in words, then its letter."""
    if _CLOSING_TAIL_RE.match(text, m.end()).end() < text_end:
        return False
    clause = before.strip()
    return " " in clause and not clause.startswith("(") and _CLOSING_NEGATION_RE.search(_last_clause(before)) is None


_BOLD_LINE_RE = re.compile(r"^[ \t]*(?:\*\*|__)", re.MULTILINE)  # where a line whose stripped text opens "**" starts


# Another option's bracketed label later on a label line.
_OTHER_LABEL_IN_LINE_RE = re.compile(r"\((?P<letter>[A-Z])\)")


def label_lines(text: str, valid: set[str], labels: LabelLines,
                deadline: Deadline | None = None) -> Iterator[Candidate]:
    """A label line standing alone: the response's first line, or a whole bold line, that opens no list."""
    first = _SPACES_RE.match(text).end()
    # Only the first line and lines that open with a bold mark can qualify: the others are not looked at.
    starts = labels.starts
    lines: Iterable[int] = range(len(starts))
    if len(starts) > GATED_FROM:
        bold = [m.start() for m in _BOLD_LINE_RE.finditer(text)] if "**" in text or "__" in text else []
        lines = sorted({i for p in (first, *bold) for i in [bisect.bisect_left(starts, p)]
                        if i < len(starts) and starts[i] == p})
    for i in checked(reversed(lines), deadline):
        start, letter = starts[i], labels.letters[i]
        if letter not in valid:
            continue
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        line = text[start:line_end].strip()
        bold_whole = line.startswith(("**", "__")) and line.endswith(("**", "__"))
        if start == first and not bold_whole and len(line) > LABEL_TAIL_CHARS and ends_unfinished(text):
            continue  # "(A) We first find ..." cut off mid-way: a paragraph that opens with a label, no answer
        if _OTHER_LABEL_IN_LINE_RE.search(line, 1) and any(
                m.group("letter") in valid and m.group("letter") != letter
                for m in _OTHER_LABEL_IN_LINE_RE.finditer(line, 1)):
            continue  # "(A) perfect (C) diminished (D) augmented": options listed on one line, none chosen
        if (start == first or bold_whole) and not labels.in_list(start, letter):
            yield text.find(letter, start), line_end, letter, "label line"
