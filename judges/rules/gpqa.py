"""Multiple-choice grading: the last committed answer letter within the sample's choice set (docs/grading.md)."""
from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from itertools import islice

from judges.rules.deadline import Deadline, SampleTimeout
from judges.rules.extract import (boxed_from_last, committed_text, ends_unfinished, finditer_from_last,
                                  loop_start, lower_same_length, retracted_after)
from judges.rules.gpqa_leadins import (LABEL_LINE_RE, LABEL_TAIL_CHARS, LabelLines, after_leadin, checked, commits, label_lines, letter_verdicts,
                                      negated, parenthesised, sentence_before, verb_phrases, word_spans)
from judges.rules.gpqa_reach import GATED_CHARS, letter_reach, merge, starts_in
from judges.rules.normalise import fullwidth, unicode_spaces
from judges.rules.vocabulary import (ANSWER_RE_PART, ANSWER_WORDS, CHOICE_WORDS, CJK_ANSWER_WORDS, WRAPPER_RE_PART,
                                    alternation)
from judges.rules.gpqa_plain import (ANY_LABEL_RE, closing_bracket, closing_letter, closing_predicate, label_after_copula,
                                    label_with_own_text, opening_line_option, opening_predicate, opening_quote,
                                    yes_no_opening, zh_conclusion)
from judges.rules.answer_hedges import hedge_around
from judges.rules.outside_label import label_outside_choices
from judges.rules.thinking import closed_thinking, unsettled
from judges.rules.unanswered import asks_for_the_question
from judges.rules.invented_problem import before_invented_problem
from judges.rules.json_reply import answer_field
from judges.rules.gpqa_options import (MAX_SEGMENT_CHARS, option_in_text, option_starting, options_equal, options_named,
                                      quotes_own_option, strip_tail, tokens)

PARSER_VERSION = "gpqa-v11"
DEFAULT_LETTERS = ("A", "B", "C", "D")
TIME_LIMIT_S = 5.0  # per sample, as for AIME: past it the sample is a judge_error with the reason

# Markdown, math and bracket wrappers allowed between an anchor and its letter.
_WRAP = (r"(?P<wrap>(?:[\s*_$«“\"]|\\boxed\s*\{|\\" + WRAPPER_RE_PART + r"\s*\{|\\\(|\\\[|\(|\[|\{|(?:option|choice)\b)*)")
# After the letter: no further word character (so "Cannot" and "Carbon" are not C), and not
# hedged between two letters ("B or C", "A/C", "A, B", "C、D").
_LETTER = r"(?P<letter>[A-Za-z])(?![A-Za-z0-9])(?![ \t]*[=^_])(?!\)?\**\s*(?:or|and|/|,|&|、|和|或)\s*\(?(?-i:[A-Z])(?![A-Za-z0-9]))"
_I = re.IGNORECASE

# Every anchor contains one of these words; they are found with fast substring searches of the
# lower-cased text, and the precise patterns below are only tried at those positions (matching at a
# fixed position is cheap, while scanning with an alternation is slow in Python's re).
_TRIGGERS = (*ANSWER_WORDS, *CHOICE_WORDS, "boxed", *CJK_ANSWER_WORDS, "选")
_GATED_TRIGGERS = frozenset((*ANSWER_WORDS, *CHOICE_WORDS))  # the words whose letters gpqa_reach describes
_ANS = ANSWER_RE_PART
# "the answer to our calculated value is likely D": a few words between, and adverbs or articles after.
_BETWEEN = r"(?:[ \t]+(?!(?:is|are|depends|if|whether|not|would|could|might|cannot|can|may)\b)[^\s.:;!?,()]+){0,6}?"
_COPULA = r"(?:is|would\s+be|should\s+be|must\s+be|est|ist|lautet|wäre|es|sería|serait|è|é)"
_AFTER_COPULA = (r"(?:[ \t]+(?:(?:most|very|more|quite)[ \t]+)?(?:likely|probably|therefore|thus|indeed|clearly|definitely|"
                 r"then|still|actually|certainly|now|donc|also|daher|entonces|la|le|l'|die|der|el|option|choice|"
                 r"opción|opcion|choix|variante|antwort))*")
_AT_ANSWER = (
    # Answer: C / **Answer:** C / Answer — C
    re.compile(rf"{_ANS}(?:[ \t]*(?:\*\*|__))?(?:[ \t]*[:：]|[ \t]+[—–-])(?:[ \t]*(?:\*\*|__))?{_WRAP}{_LETTER}", _I),
    # the answer is (C) / the correct answer is likely D / la bonne réponse est donc C
    re.compile(rf"{_ANS}{_BETWEEN}[ \t]+{_COPULA}\b(?:[ \t]*:)?{_AFTER_COPULA}{_WRAP}{_LETTER}", _I),
)
# "The answer (D) is the closest.", "The answer (B) is 102,000 Pa.": the letter bracketed between the answer word and
# its verb (Qwen-VL on MMMU, tests/judges/real); "is not", "is incorrect", "is disregarded" judge an option instead of
# choosing it.
_AT_ANSWER_LABELLED = re.compile(
    rf"{_ANS}[ \t]+\((?P<letter>(?-i:[A-Z]))\)[ \t]+(?:is|would\s+be)\b"
    r"(?![ \t]+(?:not|incorrect|wrong|false|ruled|eliminated|unlikely|disregarded|ignored|rejected|dismissed)\b)", _I)
# 答案：C / 正确答案是 (C) / 答え：D / 【答案】 C <eoa> (GAOKAO-Bench's template)
_AT_ZH = re.compile(rf"{alternation(CJK_ANSWER_WORDS)}(?:】|\])?(?:\s*(?:是|为|應該是|应该是|は))?(?:\s*[:：])?{_WRAP}{_LETTER}", _I)
# 故选C / 应选 B / 正确选项是 C: "选" only counts after a word that makes it the model's choice.
_AT_ZH_CHOOSE = re.compile(rf"选(?:项)?(?:\s*(?:是|为))?(?:\s*[:：])?{_WRAP}{_LETTER}", _I)
_ZH_CHOOSERS = ("故", "应", "應", "所以", "因此", "正确", "我", "最终", "综上")
# ... or a verdict right after the letter ("选项(D)正确"), or the reply's last line opening with it ("选项A。").
_ZH_CORRECT_AFTER = re.compile(r"[)）\]]?\s*(?:是|为)?(?:正确|对)")
_ZH_WRONG_AFTER = re.compile(r"[)）\]]?\s*(?:是|为)?(?:不|错|并非|非)")  # "选项(D)不正确": a verdict, not a choice


def _zh_closing_line(text: str, p: int) -> bool:
    """Whether the "选项" at p opens the reply's last non-empty line (an option list has more lines after)."""
    line_start = text.rfind("\n", max(0, p - 8), p) + 1
    if text[line_start:p].strip() or (line_start == 0 and p > 8):
        return False
    line_end = text.find("\n", p)
    if line_end >= 0 and text[line_end:].strip():
        return False
    previous = text[max(0, line_start - 200):line_start].rstrip().rsplit("\n", 1)[-1]
    return not previous.lstrip().startswith("选项")  # "选项A：...\n选项B：..." lists the options


_ZH_SENTENCE_ENDS = "。！？.!?\n"  # the reply is read with full-width "。" already made "."
_ZH_SENTENCE_REACH = 200


def _zh_chosen_in_clause(text: str, p: int) -> bool:
    """Whether the "选" at p opens a clause after one that a chooser word opens, or in a sentence that one opens:
    "所以∠MPB=60°，选(B)。", "因此，∠A的度数为125°，选项为(D)。"."""
    before = text[max(0, p - 2):p].rstrip()
    if not before.endswith(","):  # full-width "，" is read as ","
        return False
    start = max(0, p - _ZH_SENTENCE_REACH)
    cut = max(text.rfind(end, start, p) for end in _ZH_SENTENCE_ENDS)
    if cut < 0 and start > 0:
        return False  # no sentence start within reach
    sentence = text[cut + 1:p].lstrip(" \t*_#>")
    clauses = sentence.split(",")  # the sentence's opening clause or the one just before "选"
    return any(c.strip().startswith(_ZH_CHOOSERS) for c in (clauses[0], clauses[-2]))


_AT_HEADING = re.compile(rf"answer[ \t*_]*$\n{_WRAP}{_LETTER}", _I | re.MULTILINE)    # ### Final Answer / **C**
_HEADING_PREFIX_RE = re.compile(r"[ \t#>*_]*(?:final\s+)?", _I)
_AT_OPTION = (
    re.compile(rf"(?:option|choice)(?:\s+letter)?(?:\s+for\s+(?:this|the)\s+question)?\s+(?:is|would\s+be|should\s+be)\b"
               rf"(?:[ \t]*:)?{_WRAP}{_LETTER}", _I),  # "The correct option letter for this question is B"
    re.compile(r"(?:option|choice)\s*\(?(?P<letter>[A-Za-z])\)?\s+is\s+(?:the\s+)?(?:correct|right|best)\b", _I),
)
_AT_BOXED = (
    re.compile(r"boxed\s*\{\s*(?:\\" + WRAPPER_RE_PART + r"\s*\{\s*)?\(?(?P<letter>[A-Za-z])\)?\s*\}?\s*\}", _I),
    # \boxed{B. \ M^2 = ...}: an upper-case letter labelling the option text that follows it.
    re.compile(r"boxed\s*\{\s*(?:\\" + WRAPPER_RE_PART + r"\s*\{\s*)?\(?(?P<letter>[A-Z])"
               r"(?:\)|[.:]|\s*[-–—]|\s*\\[ ,;:])"),
)
# "(B) is the correct answer": read backwards from the trigger word.
_LETTER_BEFORE_RE = re.compile(
    r"(?:^|(?<=[\s(*]))\(?(?P<letter>[A-Z])\)?\**\s+is\s+(?:the|my)\s+(?:(?:most\s+)?(?:correct|right|best|likely|final|plausible)\s+)+$")
# After a verdict on one option, its reason or scope: "Option D is correct because ...", "... for gases".
# "(C), so that is the answer", "C, which is the correct answer", "(C). That is my final answer": the letter,
# then a pronoun that points back to it; read backwards from the answer word.
_POINTS_BACK_RE = re.compile(
    r"(?:^|(?<=[\s(*]))\(?(?P<letter>[A-Z])\)?[*_]*[ \t]*(?:[.,;][ \t]*)?(?:(?:so|and|thus),?[ \t]+)?"
    r"(?:that|this|which|it)(?:'s|’s|[ \t]+is|[ \t]+must[ \t]+be|[ \t]+would[ \t]+be)[ \t]+(?:the|my)[ \t]+"
    r"(?:(?:most[ \t]+)?(?:correct|right|best|final|likely)[ \t]+)*$", _I)
_EVALUATION_RE = re.compile(r"[ \t]{0,8}(?:,[ \t]{0,8})?(?:because|since|as|for|in|only|if|when|unless|under|given|due)\b", _I)
_WORD_RE = re.compile(r"\w*")
# "D. ethyl acetate is the correct answer": a label, the option's words (one clause), then the verdict.
_LABEL_MARK_RE = re.compile(r"(?:^|(?<=[\s,;(*]))\(?(?P<letter>[A-Z])[.)][ \t]")
_VERDICT_TAIL_RE = re.compile(r"(?<![ \t])[ \t]+is\s+(?:the|my)\s+(?:(?:most\s+)?(?:correct|right|best|likely|final|plausible)\s+)+$")
_LABEL_REACH = 160  # how far before the verdict its label may be


def _label_before(text: str, p: int) -> re.Match | None:
    """The label letter of "D. <option words> is the correct answer", read backwards from the trigger at p."""
    tail = _VERDICT_TAIL_RE.search(text, max(0, p - 40), p)
    if tail is None:
        return None
    last = None
    for last in _LABEL_MARK_RE.finditer(text, max(0, tail.start() - _LABEL_REACH), tail.start()):
        pass
    if last is None or _SENTENCE_BREAK_RE.search(text, last.end(), tail.start()):
        return None
    return last


_SENTENCE_BREAK_RE = re.compile(r"[.!?;](?=\s)|\n")
# Words that may open an anchor phrase before the trigger ("the final answer is"), for the quote check.
_PHRASE_LEAD_RE = re.compile(r"(?:(?:the|my|our|final|correct|best|right)\s+)*$", _I)
_QUOTES = "\"'“‘`«「"
# Another letter offered as an alternative later in the same sentence or bold span.
_HEDGE_AFTER_RE = re.compile(
    r"(?:[^\n.!?]|[.!?](?!\s)){0,300}?(?<![A-Za-z])or\s+(?:(?:maybe|possibly|perhaps|option|choice)\s+)?"
    r"[*_(\[]*(?P<other>[A-Z])(?![A-Za-z0-9])")
# Where an answer is stated in words ("the final answer is", "Answer:"), for reading option texts.
_STATEMENT_RE = re.compile(
    rf"(?:{ANSWER_RE_PART}|product|compound|structure|result|value|choice|option)"
    r"[^\n:.]{0,60}?(?:[:：]|\b(?:is|are|est|ist|es)\b[ \t]*:?)[ \t*_]*")
_LABEL_START_RE = re.compile(r"[\s*_(\[]*[A-Z][.):]\s")
_BOLD_CLOSE_RE = re.compile(r"(?<=\S)(?:\*\*|__)(?=\s|$|[.,;:!?)])")
_SPACE_RUN_RE = re.compile(r"\s*")
_CONDITION_OPENS_RE = re.compile(r"[\s*_>-]*(?:if|when|assuming|provided)\b", _I)
_CONDITION_AFTER_RE = re.compile(r"(?:[^\n.!?]|[.!?](?!\s)){0,300}?[;,]\s*(?:and\s+|but\s+|or\s+)?(?:if|otherwise|unless|when)\b", _I)
MAX_STATEMENTS = 20  # only the last few statements are compared with the options, so the cost stays bounded
_FOLLOW_OK = ".,;:!)]}*_$\\\n"  # what may follow an unwrapped lower-case letter (so "is a mixture" is no answer)


@dataclass
class GpqaReading:
    """The letter found (upper case, in the choice set) or None, how it was found, and a note."""

    letter: str | None
    via: str | None
    note: str | None = None
    ambiguous: tuple[str, str] | None = None  # (stated letter, letter whose option text it quotes)


@functools.lru_cache(maxsize=32)
def _bare_patterns(letters: tuple[str, ...]) -> tuple[re.Pattern, re.Pattern]:
    cls = "".join(sorted({c.upper() for c in letters} | {c.lower() for c in letters}))
    upper = "".join(sorted({c.upper() for c in letters}))
    # A line that is nothing but the letter ("C", "(C)", "**C.**"), and a whole response that is.
    bare_line = re.compile(rf"^[ \t*_#>(\[→⇒∴]*(?:=>[ \t*_(\[]*)?(?:(?i:option|choice)[ \t]+[*_(\[]*)?(?P<letter>[{upper}])"
                           rf"[ \t*_.)\]:]*$", re.MULTILINE)
    bare_whole = re.compile(rf"[\s*_#>(\[$]*(?P<letter>[{cls}])(?:[\s*_.)\]:$]*|\)\s+\S[^\n]*)", re.DOTALL)
    return bare_line, bare_whole


def _trigger_positions(text: str, low: str) -> tuple[list[tuple[str, int]], bool]:
    """Every trigger word that may lead to a letter, and where it starts: one str.find loop per word (C speed).

    Many answer and option words in a long text: only those a letter can be read from (gpqa_reach), so a
    megabyte of "Answer:\n" is not looked at word by word. The words skipped would yield nothing; the others
    keep their order. Also whether any were skipped.
    """
    if len(low) <= GATED_CHARS:
        return [(word, p) for word in _TRIGGERS for p, _ in _occurrences(low, word)], False
    limit = GATED_FROM
    triggers = []
    for word in _TRIGGERS:
        triggers += [(word, p) for p, _ in _occurrences(low, word, limit + 1 - len(triggers))]
        if len(triggers) > limit:
            break
    else:
        return triggers, False
    # A letter after the word, or before it within reach of the "is the" looked back for (_anchored).
    spans = merge(letter_reach(text).forward + [(s + len("is the"), s + 40) for s, _ in _occurrences(low, "is the")])
    return [(word, p) for word in _TRIGGERS
            for p in (starts_in(low, word, spans) if word in _GATED_TRIGGERS else
                      (q for q, _ in _occurrences(low, word)))], True


GATED_FROM = 64  # trigger words in a response before the per-word gates below pay for their set-up
_AFTER_WORD_CAP = 16
_AFTER_WORD_RE = re.compile(r"[ \t*_]{0,%d}" % _AFTER_WORD_CAP)
_COLONS_AND_DASHES = ":：—–-"


_WRAP_GAP_CAP = 64
_WRAP_GAP_RE = re.compile(r"[\s*_$«“\"(\[{:：—–-]{0,%d}" % _WRAP_GAP_CAP)


def _letter_may_follow(text: str, low: str, k: int) -> bool:
    """Whether a letter can follow at k after what an anchor may skip (wrappers, brackets, spaces): a gate
    that never refuses a text an anchor pattern would read, and refuses a run of "Answer:" lines at once."""
    gap = _WRAP_GAP_RE.match(text, k).end()
    if gap - k >= _WRAP_GAP_CAP:
        return True
    c, nxt = text[gap:gap + 1], text[gap + 1:gap + 2]
    if c == "\\" or low.startswith(("option", "choice"), gap):
        return True
    return c.isascii() and c.isalpha() and not (nxt.isascii() and nxt.isalnum())


class _Copulas:
    """Where the verbs of "the answer is C" occur, found once (on first use), so that the pattern that reads
    words up to such a verb is tried only at answer words with one close after them."""

    WORDS = ("is", "be", "est", "ist", "lautet", "wäre", "es", "sería", "serait", "è", "é")
    REACH = 200  # characters from the answer word to its verb ("the answer to our calculated value is")

    def __init__(self, low: str, answer_words: int) -> None:
        self.low = low
        # Gating pays only on long texts where the verbs are rarer than the answer words (counted at C speed).
        self.gating = answer_words > GATED_FROM and sum(low.count(w) for w in self.WORDS) < answer_words

    @functools.cached_property
    def positions(self) -> list[int]:
        return sorted(p for p, _ in word_spans(self.low, self.WORDS, whole=True))

    def near(self, p: int) -> bool:
        if not self.gating:
            return True
        i = bisect.bisect_left(self.positions, p)
        return i < len(self.positions) and self.positions[i] - p <= self.REACH


def _anchored(text: str, low: str, deadline: Deadline):
    """Every anchored letter as (match, phrase start); phrase start is where the anchor's words begin."""
    triggers, skipped = _trigger_positions(text, low)
    # All answer words, read or not (none of them overlaps itself, so count() counts every occurrence).
    answer_words = sum(low.count(word) for word in ANSWER_WORDS) if skipped else \
        sum(word in ANSWER_WORDS for word, _ in triggers)
    copulas = _Copulas(low, answer_words)
    for word, p in checked(triggers, deadline):
        if p > 0 and (low[p - 1].isascii() and low[p - 1].isalnum() or low[p - 1] == "_") and word != "boxed":
            continue  # inside a longer word ("reanswer")
        if word in CJK_ANSWER_WORDS:
            m = _AT_ZH.match(text, p)
            if m:
                yield m, p
            continue
        if word == "选":
            m = _AT_ZH_CHOOSE.match(text, p)
            if m and (any(text.endswith(w, max(0, p - 4), p) for w in _ZH_CHOOSERS)
                      or _ZH_CORRECT_AFTER.match(text, m.end()) or _zh_closing_line(text, p)
                      or _zh_chosen_in_clause(text, p) and not _ZH_WRONG_AFTER.match(text, m.end())):
                yield m, p
            continue
        if word == "boxed":
            if p > 0 and text[p - 1] == "\\":
                for pat in _AT_BOXED:
                    m = pat.match(text, p)
                    if m:
                        yield m, p - 1
                        break
            continue
        is_answer = word in ANSWER_WORDS
        patterns = _AT_ANSWER if is_answer else _AT_OPTION
        if is_answer:
            # Cheap gates, each exact: "Answer: C" needs its colon or dash right after the word (a capped
            # skip of spaces and bold marks finds it), "the answer ... is C" a verb within a few words.
            gap = _AFTER_WORD_RE.match(text, p + len(word)).end()
            after = text[gap:gap + 1] if gap - p - len(word) < _AFTER_WORD_CAP else "?"
            if after and after in _COLONS_AND_DASHES + "\n" and not _letter_may_follow(text, low, gap + 1):
                after = ""  # "Answer:" followed by no letter ("Answer:\nAnswer:"): neither form can match
            patterns = (_AT_ANSWER[0],) * (after in _COLONS_AND_DASHES or after == "?") + \
                (_AT_ANSWER[1],) * copulas.near(p)
        if is_answer and after == "(":
            patterns = (*patterns, _AT_ANSWER_LABELLED)
        for pat in patterns:
            m = pat.match(text, p)
            if m:
                lead = _PHRASE_LEAD_RE.search(text, max(0, p - 40), p)
                yield m, lead.start() if lead else p
                break
        if is_answer and after in ("\n", "?"):
            # A heading line ("### Final Answer") has a short prefix, so look back a bounded distance only.
            line_start = text.rfind("\n", max(0, p - 40), p) + 1
            if (line_start > 0 or p <= 40) and _HEADING_PREFIX_RE.fullmatch(text, line_start, p):
                m = _AT_HEADING.match(text, p)
                if m:
                    yield m, line_start
        if low.find("is the", max(0, p - 40), p) >= 0:
            before = _LETTER_BEFORE_RE.search(text, max(0, p - 60), p) or _label_before(text, p)
            if before:
                yield before, before.start()
                continue
        if is_answer and low.find(" the ", max(0, p - 24), p) + low.find(" my ", max(0, p - 24), p) > -2:
            before = _POINTS_BACK_RE.search(text, max(0, p - 60), p)
            if before and before.group("letter").isupper():
                yield before, before.start()


def _scan(text: str, bare_line: re.Pattern, valid: set[str], deadline: Deadline):
    """The last valid candidate (letter position, end, letter, via), the last out-of-set letter, and every
    "answer is X" letter with its position."""
    low = lower_same_length(text)
    best: tuple[int, int, str, str] | None = None
    rejected: tuple[int, str] | None = None

    evaluated: tuple[int, int, str, str] | None = None  # the last "Option D is correct because ..."

    def consider(pos: int, end: int, letter: str, via: str, evaluation: bool = False) -> None:
        nonlocal best, evaluated
        if evaluation:
            # A verdict with its reason is one step of a walk-through of the options: it is the answer
            # only when nothing else is ("A is the answer. Option C is correct for gases, ..." is A).
            if evaluated is None or pos > evaluated[0]:
                evaluated = (pos, end, letter, via)
            return
        if best is None or pos > best[0]:
            best = (pos, end, letter, via)

    answered: list[tuple[int, str]] = []  # every "the answer is X", to tell several questions answered apart
    for m, phrase_start in _anchored(text, low, deadline):
        letter = m.group("letter")
        pos = m.start("letter")
        if phrase_start > 0 and text[phrase_start - 1] in _QUOTES:
            continue  # a quoted format instruction ('end with "Answer: X"'), not an answer
        if letter.islower() and "wrap" in m.re.groupindex:
            # An unwrapped lower-case letter after "the answer is" is usually the article "a".
            wrapped = any(c in m.group("wrap") for c in "([{*\\$")
            nxt = text[m.end("letter"):m.end("letter") + 1]
            if not wrapped and nxt and nxt not in _FOLLOW_OK:
                continue
        if letter.islower() and _SUBPART_LIST_RE.match(text, m.end("letter")):
            continue  # "Answer: a) FFF, b) EDCC": the labels of a sub-question's parts, not a letter chosen
        if letter == "I" and _PRONOUN_I_RE.match(text, m.end("letter")):
            # "FINAL ANSWER: I cannot determine ...": the pronoun, not option I; the answer given is no letter
            if m.re in _AT_ANSWER and (rejected is None or pos > rejected[0]):
                rejected = (pos, "the answer given is a sentence, not a letter")
            continue
        if letter.upper() not in valid:
            if letter.upper() not in ("I", "X") and (rejected is None or pos > rejected[0]):
                rejected = (pos, f"letter {letter.upper()} is not a choice")  # "Answer: I think..." and X are no choices
            continue
        if m.re in _AT_ANSWER:
            answered.append((pos, letter.upper()))
        consider(pos, m.end(), letter.upper(), "anchor",
                 m.re is _AT_OPTION[1] and _EVALUATION_RE.match(text, m.end()) is not None)
    # Only a candidate after the last anchored letter can win, so the other rules read from there on.
    start = best[0] + 1 if best else 0
    labels = LabelLines(text, start)
    for found in (after_leadin(text, low, valid, labels, start, deadline),
                  verb_phrases(text, low, valid, start, deadline), letter_verdicts(text, low, valid, start, deadline),
                  parenthesised(text, low, valid, start, deadline), label_lines(text, valid, labels, deadline)):
        candidate = next(found, None)  # each rule's last candidate in the text comes first
        if candidate:
            pos, end, letter, via = candidate
            if via == "parenthesised" and best and best[3] == "anchor" and not _SENTENCE_BREAK_RE.search(
                    text, best[1], pos):
                continue  # "the correct answer is (I) with supporting details in (G)": the anchor's sentence
            consider(pos, end, letter, via, via == "letter verdict" and _EVALUATION_RE.match(
                text, _WORD_RE.match(text, end).end()) is not None)
    if len(text) <= GATED_CHARS or any(letter in text for letter in valid):  # a letter line needs a letter
        lines = list(checked(bare_line.finditer(text, max(0, start - 2)), deadline))
        # Only the last line that is no next item of a list of options can win ("(C) means ...\n(D)" cut off).
        for m in islice(reversed(lines), MAX_LIST_ITEMS):
            if not _next_list_item(text, m.start(), m.group("letter")):
                consider(m.start("letter"), m.end(), m.group("letter"), "line")
                break
    return best or evaluated, rejected, answered


MAX_LIST_ITEMS = 32  # letter lines looked at from the end for one that does not continue a list
_PREVIOUS_LINE_CHARS = 400


def _next_list_item(text: str, line_start: int, letter: str) -> bool:
    """Whether the line at line_start follows a line labelled with the letter before its own ("(B) means ..."
    then "(C)"): the next item of a list the model was writing, not a choice."""
    before = text[max(0, line_start - _PREVIOUS_LINE_CHARS):line_start].rstrip()
    previous = LABEL_LINE_RE.match(before, before.rfind("\n") + 1)
    return previous is not None and ord(previous.group("letter")) == ord(letter) - 1


_LETTER_MENTION_RE = re.compile(r"(?<![A-Za-z0-9])\(?(?P<letter>[A-Z])\)?(?![A-Za-z0-9])")


def _names_a_letter(passage: str, valid: set[str]) -> bool:
    """Whether a looping passage goes over the options by letter ("so (H) is incorrect"): a walk-through."""
    return any(m.group("letter") in valid and m.group(0) != m.group("letter")
               for m in _LETTER_MENTION_RE.finditer(passage))


def _label_text_start(text: str, pos: int) -> tuple[int, bool]:
    """Where the text after the letter at pos begins, and whether the letter labels it ("C. text", "C) text")."""
    k = pos + 1
    while k < len(text) and k < pos + 8 and text[k] in ")]*_»”}":
        k += 1
    labelled = text[pos + 1:k].startswith(")")
    if k < len(text) and text[k] in ".:-–—":
        k, labelled = k + 1, True
    return k, labelled


def _quoted_text(text: str, start: int) -> str:
    """The option text quoted after a label, up to the end of its line or bold span."""
    end = text.find("\n", start, start + MAX_SEGMENT_CHARS)
    seg = text[start:end if end >= 0 else start + MAX_SEGMENT_CHARS].lstrip(" \t*_")
    close = _BOLD_CLOSE_RE.search(seg)
    return (seg[:close.start()] if close else seg).strip()


def _hedged_with(text: str, pos: int, letter: str, valid: set[str]) -> str | None:
    """Another letter offered as an alternative in the same sentence ("**C. (R)-x** or **D. (S)-x**")."""
    start, _ = _label_text_start(text, pos)
    m = _HEDGE_AFTER_RE.match(text, start)
    if m and m.group("other") in valid and m.group("other") != letter:
        return m.group("other")
    return None


def _conflict(text: str, pos: int, letter: str, letters: tuple[str, ...], options: list[str]) -> str | None:
    """The other option whose text a letter quotes ("C. <text of option D>"), or None."""
    start, labelled = _label_text_start(text, pos)
    if not labelled:
        return None
    quoted = _quoted_text(text, start)
    if not quoted:
        return None
    other = option_starting(quoted, options)
    own = letters.index(letter)
    if other is None or other == own:
        return None
    if quotes_own_option(quoted, options[own]) and not _whole_other(quoted, options[other], options[own]):
        return None  # its own option's words, or the start of them
    if text[pos - 1:pos] == "(" and _after_own_text(text, pos - 1, options[own]):
        return None  # "... is by skin biopsy (D). Wood lamp examination (A) ...": the letter closes its own option's words
    return letters[other]


def _whole_other(quoted: str, other: str, own: str) -> bool:
    """Whether the quoted words are another option whole and only the start of the letter's own ("B. ['Hi!', 'Hi!']"
    where that list is option F and B's list is longer)."""
    said = strip_tail(tokens(quoted))
    return said == strip_tail(tokens(other)) and said != strip_tail(tokens(own))


def _after_own_text(text: str, pos: int, option: str) -> bool:
    """Whether the words right before pos are the option's own text ("skin biopsy (D)")."""
    own = strip_tail(tokens(option))
    before = tokens(text[max(0, pos - 4 * len(option) - 20):pos])
    return bool(own) and before[-len(own):] == own


def _statement_at(text: str, start: int) -> str:
    """The words a statement gives from start: the rest of its line, or the next line after "is:"."""
    segment = _quoted_text(text, start)
    if not segment:
        segment = _quoted_text(text, _SPACE_RUN_RE.match(text, start).end())
    return "" if _LABEL_START_RE.match(segment) else segment  # a list line no letter rule accepted


_STATEMENT_WORDS = (*ANSWER_WORDS, "product", "compound", "structure", "result", "value", "choice", "option")
_STATEMENT_STOPS = ("is", "are", "est", "ist", "es")
_STATEMENT_REACH = 62  # the most characters from a statement word to its ":" or verb, as _STATEMENT_RE allows


def _statement_starts(low: str) -> list[int]:
    """Where the last MAX_STATEMENTS statements' words begin (_STATEMENT_RE ends), latest first.

    The pattern is tried only at its words with a ":" or a verb close after them: a megabyte of
    "answer answer" costs a few C-speed searches, not a pattern tried at every word.
    """
    count = sum(low.count(word) for word in _STATEMENT_WORDS) if len(low) > GATED_FROM * 100 else 0
    if count <= GATED_FROM or 4 * (low.count(":") + low.count(" is ") + low.count(" are ")) >= count:
        # Statements are common: the last few are found soon by scanning back from the end.
        return [m.end() for m in islice(finditer_from_last(_STATEMENT_RE, low), MAX_STATEMENTS)]
    stops = [p for p, _ in word_spans(low, _STATEMENT_STOPS, whole=True)] + \
        [p for colon in (":", "：") for p, _ in _occurrences(low, colon)]
    # Only words with a stop within reach after them, found inside those spans (none at all in "answer answer").
    near_stops = merge((max(0, stop - _STATEMENT_REACH), stop - 1) for stop in stops)
    starts: list[int] = []
    for p in sorted((p for word in _STATEMENT_WORDS for p in starts_in(low, word, near_stops)), reverse=True):
        m = _STATEMENT_RE.match(low, p)
        if m and m.end() not in starts:
            starts.append(m.end())
            if len(starts) == MAX_STATEMENTS:
                break
    return starts


def _occurrences(low: str, word: str, limit: int | None = None) -> list[tuple[int, int]]:
    """Every place word occurs (inside longer words too), by a C-speed find loop; the first limit of them
    when a limit is given."""
    found = []
    p = low.find(word)
    if limit is not None:
        while p >= 0 and len(found) < limit:
            found.append((p, p + len(word)))
            p = low.find(word, p + 1)
        return found
    while p >= 0:
        found.append((p, p + len(word)))
        p = low.find(word, p + 1)
    return found


# What may follow a box that closes a response: math closers, markup and a full stop.
_CLOSING_TAIL_RE = re.compile(r"[\s$.\\\])*_]*")
# "Answer: None of the above (none of the options match 100 m/s)": a statement that the answer is no option; the
# option text it goes on to quote is the value it found, not its choice (simple-evals runs, tests/judges/real).
_NO_OPTION_RE = re.compile(r"[\s*_\"“'‘(\[]*none\b(?:[ \t]+of[ \t]+(?:the[ \t]+)?(?:above|these|options|choices|answers|given))?",
                           re.IGNORECASE)
# A sentence that runs into the value after it ("... is", "... equals", "... =", "... the diagonal:"); one that
# ended before the box ("Then n is found.") does not give the box as its value.
_STATES_VALUE_RE = re.compile(r"(?:\b(?:is|are|be|was|equals?|gives?)|[=:])$", _I)


def _states_value(text: str, before_box: int) -> bool:
    return _STATES_VALUE_RE.search(text, max(0, before_box - 12), before_box) is not None


def _restates(sentence: str, body: str | None) -> bool:
    """Whether a sentence ends with the value of the box after it ("... code words is **24**." then \\boxed{24}):
    the box restates the sentence's conclusion."""
    said, value = strip_tail(tokens(sentence)), strip_tail(tokens(body or ""))
    return bool(value) and said[-len(value):] == value


# What may stand between a lead-in and its boxed answer: spaces, markup and math openers ("\\[", "\\(", "$$").
_MATH_OPENERS = ("\\[", "\\(", "$")
_OPENER_REACH = 24


def _before_math_opener(text: str, pos: int) -> int:
    """Where the text before a \\boxed at pos ends once the math openers and markup just before it are
    skipped (a few characters at most, so no pattern is needed)."""
    start = max(0, pos - _OPENER_REACH)
    head = text[start:pos]
    while True:
        head = head.rstrip(" \t\n*_")
        opener = next((o for o in _MATH_OPENERS if head.endswith(o)), None)
        if opener is None:
            return start + len(head)
        head = head[:-len(opener)]


# A closing line this short may state the answer without an answer word ("the ? represents a neutron.").
_PLAIN_LAST_CHARS = 120


_BOX_CLOSES_RE = re.compile(r"[\s$.\\\])*_`]*")  # what may follow a box that closes the response, a code fence too


def _later_boxed_option(text: str, after: int, options: list[str]) -> int | None:
    """The one option whose whole text the last box after `after` is, when that box closes the response."""
    last = next(iter(boxed_from_last(text)), None)
    if last is None or last.body is None or last.start < after or not _BOX_CLOSES_RE.fullmatch(text, last.end):
        return None
    named = options_equal(last.body, options)
    return named.pop() if len(named) == 1 else None


def _read_option_text(text: str, low: str, letters: tuple[str, ...], options: list[str]) -> str | None:
    """The letter of the one option whose text the response's last statement gives, or None.

    Statements are "answer:" / "the product is" phrases and boxed answers, latest first; only when
    none names an option does the last line count, so an explanation after the answer cannot win.
    A box that closes the response is its answer when its sentence runs into it ("... the length is
    $\\boxed{4}$.", "... gives the diagonal:" and the box on its own lines), and a box is compared by its whole
    body first ("\\boxed{BE}. These add up to ...").
    """
    starts = _statement_starts(low)
    boxes = [b for b in islice(boxed_from_last(text), MAX_STATEMENTS) if b.body is not None]
    # A boxed answer is led in by the sentence before its math opener: "**Final Answer:**\n\\[\n\\boxed{144}".
    boxed = {b.start + len("\\boxed{"): _before_math_opener(text, b.start) for b in boxes}
    bodies = {b.start + len("\\boxed{"): b.body for b in boxes}
    closing = boxes[0].start + len("\\boxed{") if boxes and _CLOSING_TAIL_RE.fullmatch(text, boxes[0].end) else None
    for start in sorted(set(starts) | set(boxed), reverse=True):
        segment = _statement_at(text, start)
        lead = sentence_before(text, boxed.get(start, start))
        committed = commits(lead)
        closes = not committed and start == closing and not negated(lead) and \
            (_states_value(text, boxed[start]) or _restates(lead, bodies[start]))
        if segment and committed and start not in bodies and _NO_OPTION_RE.match(segment) and \
                not any(_NO_OPTION_RE.match(o) for o in options):
            return None  # the latest statement says no option is right (unless an option itself says "none")
        if segment and (committed or closes):
            # A box is its whole value ("\\boxed{15\\sqrt{3}}" is not the option "15"); a committed statement
            # may also quote an option inside its line.
            named = options_equal(bodies[start], options) if start in bodies else set()
            if not named and committed:
                said = segment.strip("*_ \t\"“”'‘’")
                bracketed = _BRACKETED_VALUE_RE.fullmatch(said)  # "The answer is (86).": an option's value in brackets
                named = options_named(bracketed.group(1) if bracketed else said, options)  # '... is "No."'
            if named:  # the latest statement that names options decides; naming two is no answer
                return letters[named.pop()] if len(named) == 1 else None
    last = _statement_at(text, text.rstrip().rfind("\n") + 1)
    if last and len(last) > _PLAIN_LAST_CHARS and not commits(last):
        # A long closing paragraph states its conclusion in its last sentence ("We refer to ... . In the
        # reaction ..., the ? represents a neutron."); the sentences before it are the working.
        last = sentence_before(last, len(last.rstrip(" \t*_.!")))
    if last and (commits(last) or len(last) <= _PLAIN_LAST_CHARS and not negated(last)) and not ends_unfinished(text):
        found = option_in_text(last.strip("*_ \t"), options)
        labels = {m.group(1) for m in ANY_LABEL_RE.finditer(last)}.intersection(letters)
        if found is None or labels - {letters[found]}:
            return None  # "... most like D. Monks in a monastery.": a label and another option's words
        return letters[found]
    return None


# Plain-word answers, tried in this order when nothing else names an option (judges/rules/gpqa_plain.py).
_PLAIN_RULES = ((yes_no_opening, "yes/no"), (label_with_own_text, "label with its text"),
                (label_after_copula, "label after a copula"),
                (closing_predicate, "closing predicate"), (closing_bracket, "closing bracket"),
                (opening_predicate, "opening predicate"), (opening_quote, "opening quote"),
                (opening_line_option, "opening line"), (closing_letter, "closing letter"), (zh_conclusion, "conclusion"))


def _normalise(text: str) -> str:
    """Full-width forms and non-breaking spaces as ASCII, keeping every index in place."""
    return text if text.isascii() else unicode_spaces(fullwidth(text))


class ReadFailed(Exception):
    """The reading did not finish within the sample's time limit; the message says so."""


def read_letter(response: str, letters: tuple[str, ...] = DEFAULT_LETTERS,
                options: list[str] | None = None, deadline: Deadline | None = None,
                cut_off: bool = False) -> GpqaReading:
    """The last committed answer letter in a response, or None (no answer, hedged or ambiguous).

    cut_off: the response hit the token limit with no thinking split off (judges/rules/thinking.py).
    Raises ReadFailed when the deadline (default: TIME_LIMIT_S from now) passes first.
    """
    try:
        return _read_letter(response, tuple(letters), options, deadline or Deadline(TIME_LIMIT_S), cut_off)
    except SampleTimeout as exc:
        raise ReadFailed(str(exc)) from exc


# Base models continue a few-shot prompt past their answer with a question of their own ("Question:"
# on its own line, then options); what follows it answers that question, not the one asked.
_NEXT_QUESTION_RE = re.compile(r"\n[ \t]*Question[ \t]*[:：]")
_OPTIONS_AHEAD_RE = re.compile(r"\n[ \t]*(?:Options|Choices)[ \t]*[:：]|\n[ \t]*\(?A[.)]")
_OPTIONS_AHEAD_CHARS = 3000  # how far after "Question:" its options may start


def _before_invented_question(text: str, letters: tuple[str, ...], options: list[str] | None) -> str:
    """The text before a question the model made up and went on to answer (kept whole when there is none).

    A "Question:" before any other text is the prompt echoed, and so is one after a short opening line that
    answers nothing ("Let's think step by step for each question."). When more questions follow such an
    echo, the model went on to answer several: the block whose listed options are the sample's own is the
    question asked; when no single block is, the one asked cannot be told and only the opening line is kept.
    """
    first = len(text) - len(text.lstrip())
    echoed = None  # where a question echoed after an opening line starts
    options_at = -1  # the next options line after the current "Question:": each is searched for once
    for found in _NEXT_QUESTION_RE.finditer(text):
        if options_at < found.end():
            options_line = _OPTIONS_AHEAD_RE.search(text, found.end())
            if options_line is None:
                return text
            options_at = options_line.start()
        if found.start() > first and options_at - found.end() <= _OPTIONS_AHEAD_CHARS:
            if echoed is None and _opening_line_only(text[first:found.start()]):
                echoed = found.start()
                continue
            if echoed is not None and options:
                asked = _block_with_options(text, echoed, letters, options)
                if asked is not None:
                    return asked
            return text[:echoed if echoed is not None else found.start()]
    return text


_MAX_QUESTION_BLOCKS = 32  # a response answering more questions than this is not searched for the one asked
# An option line of an echoed question: "B. text" or "B) text".
_OPTION_LINE_RE = re.compile(r"^[ \t]*\(?(?P<letter>[A-Z])[.)][ \t]+(?P<text>.+)$", re.MULTILINE)


def _block_with_options(text: str, start: int, letters: tuple[str, ...], options: list[str]) -> str | None:
    """The one question block (from its "Question:" to the next) from start on whose option lines give every
    option of the sample under its own letter, or None when none or several do."""
    heads = [m.start() for m in islice(_NEXT_QUESTION_RE.finditer(text, start), _MAX_QUESTION_BLOCKS + 1)]
    if len(heads) > _MAX_QUESTION_BLOCKS:
        return None
    matching = []
    for head, end in zip(heads, heads[1:] + [len(text)]):
        window = min(end, head + _OPTIONS_AHEAD_CHARS * 4)
        listed = {m.group("letter"): m.group("text") for m in _OPTION_LINE_RE.finditer(text, head, window)}
        if all(letter in listed and option_starting(listed[letter], options) == i
               for i, letter in enumerate(letters)):
            matching.append((head, end))
    return text[matching[0][0]:matching[0][1]] if len(matching) == 1 else None


# The most an opening line before an echoed question may hold, and what it may not (an answer or a letter).
_OPENING_LINE_CHARS = 200
_ANSWERS_SOMETHING_RE = re.compile(r"answer|(?<![A-Za-z])[A-J](?![A-Za-z])|\\boxed", _I)


def _opening_line_only(head: str) -> bool:
    return len(head) <= _OPENING_LINE_CHARS and _ANSWERS_SOMETHING_RE.search(head) is None


# A chat model that "sums up all the answers" after its own repeats the few-shot examples' answers.
_ALL_ANSWERS = ("all the answers", "all answers", "the answers above", "above answers", "previous answers",
                "所有答案", "以上答案", "以上问题的答案", "上述答案")
_SUMMING_UP = ("summar", "combin", "recap", "compil", "总结", "汇总")
_PLURALS = ("nswers", "NSWERS", "所有答案", "以上", "上述")


def _before_summary_of_answers(text: str) -> str:
    """The text before a line that sums up "all the answers" (kept whole when there is none)."""
    if not any(word in text for word in _PLURALS):
        return text  # the common case, at the cost of a few substring searches
    low = lower_same_length(text)
    for phrase in _ALL_ANSWERS:
        at = low.find(phrase)
        while at >= 0:
            line_start = low.rfind("\n", max(0, at - 120), at) + 1  # bounded: a long line is no heading
            line_end = low.find("\n", at, at + 120)
            line = low[line_start:line_end if line_end >= 0 else at + 120]
            if line_start > 0 and any(w in line for w in _SUMMING_UP):
                return text[:line_start]
            at = low.find(phrase, at + 1)
    return text


# An explicit non-answer after the last letter: "None of the options match this value.", "The answer is not
# provided in the options.", "(C) $7.40, but this is not the correct answer".
_NON_ANSWER_RE = re.compile(
    r"\b(?:none\s+of\s+the\s+(?:given\s+|provided\s+|listed\s+|above\s+|answer\s+)?(?:options|choices)"
    r"|not\s+(?:among|in|listed\s+in|provided\s+in|one\s+of)\s+the\s+(?:given\s+|provided\s+|listed\s+)?"
    r"(?:options|choices)|but\s+(?:this|that|it)\s+is\s+not\s+the\s+(?:correct|right)\s+answer)", _I)
# A verdict against an option or a value, in the passage a loop repeats.
_REJECTS_RE = re.compile(r"\b(?:is|are)[ \t]+(?:not[ \t]+(?:correct|right|the[ \t]+(?:correct|right)[ \t]+answer)|incorrect|wrong)\b", _I)
_REJECT_STEMS = ("correct", "right", "wrong", "CORRECT", "RIGHT", "WRONG", "Correct", "Wrong")  # a substring test first
_LOOP_UNIT_CHARS = 400

# A second bracketed letter joined to the one read: "(c) or (d)", "(A) and (C)" (lower case as models write it).
# The first letter's own words may come between: "(B) 13 and (C) 26", "(A) apoptosis and (B) free radical injury".
_PAIRED_AFTER_RE = re.compile(r"[)\]]?[*_]*(?:[ \t]+[^\s.!?;:()][^\n.!?;:()]{0,60}?)?[ \t]*(?:,[ \t]*)?(?i:or|and|&)[ \t]+"
                              r"(?:(?i:option|choice)[ \t]+)?[*_]*(?:\((?P<other>[A-Za-z])|(?P<other_label>[A-Z]))\)(?![A-Za-z0-9])")
# Another label later on the answer's line, after the first label's words and a wide gap or a list comma: "C. <words>
# D. <words>" (GAOKAO-Bench's text-davinci-003, tests/judges/real).
_LABELS_LISTED_AFTER_RE = re.compile(r"[)\]]?[.、][^\n]{1,80}?(?:[ \t]{2,}|[,;、][ \t]*)(?P<other>[A-Z])[.、]")
# Another parenthesised letter right before the one read, in the same list: "(E), and (G)".
_LISTED_BEFORE_RE = re.compile(r"\((?P<other>[A-Z])\)[ \t]*(?:,[ \t]*)?(?:and[ \t]+|or[ \t]+|&[ \t]*)?\(?$")
# A later statement that gives two letters as the answer ("The answer is C and H."): no single answer stands.
_TWO_LETTER_ANSWER_RE = re.compile(
    r"\b(?i:answer)\s+(?:is|would\s+be)(?:\s*:)?[ \t*_]*\(?(?P<one>[A-Z])\)?[ \t*_]*(?:,|and|or|&|/)[ \t]*\(?(?P<two>[A-Z])\)?(?![A-Za-z0-9])")
# A sub-question's label opening a line or sentence: "(a)", "b)", "(ii)".
_PART_LABEL_RE = re.compile(r"(?:^|(?<=[.:]\s))[ \t*_]*\(?(?:[a-f]|i{1,3}|iv|v|vi)\)[ \t]", re.MULTILINE)


def _several_questions(text: str, answered: list[tuple[int, str]]) -> str | None:
    """The letters, when the response answers the parts of one question ("(a) ... The answer is (D). (b) ... (B).").

    Two different "answer is" letters with a sub-question label between them. Answers to several whole
    questions (a few-shot prompt's worked examples answered again, the question asked last) are not this:
    the last statement is read, as for any answer restated or revised (docs/grading.md).
    """
    letters = [letter for _, letter in answered]
    if len(set(letters)) < 2 or _FINAL_BEFORE_RE.search(text, max(0, answered[-1][0] - 24), answered[-1][0]):
        return None  # one letter, or the last statement is the final answer to the whole question
    for (p0, a), (p1, b) in zip(answered, answered[1:]):
        if a != b and _PART_LABEL_RE.search(text, p0, p1):
            return ", ".join(letters)
    return None


_BRACKETED_VALUE_RE = re.compile(r"\(([^()\n]{1,40})\)[.!]?")
# The value of a JSON reply's answer field: a letter alone ("A", "(B)", "C."); several letters listed ("B, C").
_FIELD_LETTER_RE = re.compile(r"[(\[]?(?P<letter>[A-Z])[)\]]?\.?")
_FIELD_LETTERS_RE = re.compile(r"(?<![A-Za-z])[A-Z](?![A-Za-z])")
_SUBPART_LIST_RE = re.compile(r"\)[^\n]{0,80}?[,;][ \t]*[b-h]\)")
_FINAL_BEFORE_RE = re.compile(r"\bfinal[ \t]+answer\b", re.IGNORECASE)
# What follows the pronoun "I" in a sentence: "I cannot", "I think", "I'm".
_PRONOUN_I_RE = re.compile(r"(?:[ \t]+(?:cannot|can|could|think|believe|am|do|don't|don’t|would|will|need|have|must|should|was|"
                           r"feel|apologi[sz]e)\b|['’](?:m|d|ll|ve)\b)")
_BRACKETED_LABEL_RE = re.compile(r"\((?P<letter>[A-Z])\)")


def _bare_tail_fits(whole: re.Match, letters: tuple[str, ...], options: list[str] | None) -> bool:
    """Whether the text after a response's opening letter may be its answer: "(A) We need to find the moles ..."
    running on until cut off is a paragraph that opens with a label, and the model never got to its answer."""
    tail = whole.string[whole.end("letter"):].lstrip(" \t*_.)]:$")
    if any(m.group("letter") in letters for m in _BRACKETED_LABEL_RE.finditer(tail)):
        return False  # "(A) perfect (C) diminished (D) augmented": the options listed, none chosen
    if len(tail) <= LABEL_TAIL_CHARS or not ends_unfinished(tail):
        return True
    letter = whole.group("letter").upper()
    return bool(options) and letter in letters and option_starting(tail, options) == letters.index(letter)


def _read_letter(response: str, letters: tuple[str, ...], options: list[str] | None,
                 deadline: Deadline, cut_off: bool = False) -> GpqaReading:
    text, think_open = committed_text(response)
    if options is not None and len(options) != len(letters):
        options = None
    text = _before_invented_question(_normalise(text), letters, options)
    text = _before_summary_of_answers(before_invented_problem(text, headings="Problem|Q"))
    bare_line, bare_whole = _bare_patterns(letters)
    valid = {c.upper() for c in letters}

    field = answer_field(text)
    if field is not None:
        chosen = _FIELD_LETTER_RE.fullmatch(field)
        if chosen and chosen.group("letter") in valid:
            return GpqaReading(chosen.group("letter"), "answer field")
        if len(_FIELD_LETTERS_RE.findall(field)) > 1:
            return GpqaReading(None, None, f"the answer field gives several letters ({field})")
    best, rejected, answered = _scan(text, bare_line, valid, deadline)
    parts = _several_questions(text, answered)
    if parts:
        return GpqaReading(None, None, f"answers several questions ({parts})")
    if best is None and rejected is None:
        # A response that is only a letter ("c", "(B) ethyl acetate"), when nothing else states one.
        whole = bare_whole.fullmatch(text.strip())
        if whole and _bare_tail_fits(whole, letters, options):
            return GpqaReading(whole.group("letter").upper(), "bare")
    if rejected and (best is None or rejected[0] > best[0]):
        # The last answer given is a letter outside the choice set, or no letter at all: no valid answer, not an earlier one.
        return GpqaReading(None, None, rejected[1])
    thinking_cut = cut_off and not closed_thinking(response)
    if best is None:
        deadline.check("reading the answer")
        if thinking_cut:
            return GpqaReading(None, None, "cut off before settling on a letter")
        outside = label_outside_choices(text, valid)
        if outside:
            return GpqaReading(None, None, f"letter {outside} is not a choice")
        letter = _read_option_text(text, lower_same_length(text), letters, options) if options else None
        if letter:
            return GpqaReading(letter, "option text")
        for rule, via in _PLAIN_RULES if options else ():
            letter = rule(text, letters, options)
            if letter:
                return GpqaReading(letter, via)
        return GpqaReading(None, None, "think block not closed" if think_open else None)
    start, end, letter, via = best
    deadline.check("reading the answer")
    if options:
        boxed = _later_boxed_option(text, end, options)
        if boxed is not None and letters[boxed] != letter:
            # "The correct answer is (D). ... DE = \\boxed{\\frac{20}{3}}" (option A's value): the box comes last
            start, end, letter, via = len(text), len(text), letters[boxed], "boxed option"
    # Finding a loop costs ~50 us: it is looked for only when the text is cut off or a rejection is near the letter.
    near = text[max(0, start - 2 * _LOOP_UNIT_CHARS):start + 2 * _LOOP_UNIT_CHARS]
    near_rejection = any(w in near for w in _REJECT_STEMS) and _REJECTS_RE.search(near)
    looping = loop_start(text) if near_rejection or ends_unfinished(text) else None
    if looping is not None and start < looping and ends_unfinished(text) and \
            _names_a_letter(text[looping:looping + 400], valid):
        # cut off in a loop ("..., so (H) is incorrect." over and over): the model never finished its walk
        return GpqaReading(None, None, f"cut off in a loop after {letter}")
    if looping is not None and start >= looping and _REJECTS_RE.search(text, looping, looping + _LOOP_UNIT_CHARS):
        # the letter is inside a loop that keeps rejecting ('... is "G. Insects" is not correct, but ...', "A1's share:
        # ... is not correct."): the last turn, cut off, lacks its own verdict, or is the next turn's first letter
        return GpqaReading(None, None, f"cut off in a loop that rejects {letter}")
    if retracted_after(text, end):
        return GpqaReading(None, None, f"answer {letter} retracted afterwards")
    hedge = hedge_around(text, start, end, letter, valid)
    if hedge:
        return GpqaReading(None, None, f"hedged between {hedge}")
    if thinking_cut and unsettled(text, start, end):
        return GpqaReading(None, None, f"cut off while still weighing {letter}")
    if _NON_ANSWER_RE.search(text, end):
        return GpqaReading(None, None, f"says no option is the answer after giving {letter}")
    if asks_for_the_question(text, end):
        return GpqaReading(None, None, f"says the question asked reached it incomplete after giving {letter}")
    two = _TWO_LETTER_ANSWER_RE.search(text, end)
    if two and {two.group("one"), two.group("two")} <= valid and two.group("one") != two.group("two"):
        return GpqaReading(None, None, f"answers {two.group('one')} and {two.group('two')} after giving {letter}")
    paired = _PAIRED_AFTER_RE.match(text, end)
    other = (paired.group("other") or paired.group("other_label")).upper() if paired else None
    if other in valid and other != letter:
        # "The answer is (c) or (d).", "(a) and (b).", "B) ... and C) ...": a second labelled letter joined to the one read
        return GpqaReading(None, None, f"{letter} and {other} given together")
    listed_after = _LABELS_LISTED_AFTER_RE.match(text, end)
    if listed_after and listed_after.group("other") in valid and listed_after.group("other") != letter:
        # "【答案】C. <option C's words>  D. <option D's words>": two labelled options on the answer's line
        return GpqaReading(None, None, f"{letter} and {listed_after.group('other')} given together")
    listed = _LISTED_BEFORE_RE.search(text, max(0, start - 16), start)
    if listed and listed.group("other") in valid and listed.group("other") != letter:
        # "The correct options are (D), (E), and (G).", "(E) or (G)": several letters given together, no single answer
        return GpqaReading(None, None, f"{listed.group('other')} and {letter} given together")
    other = _hedged_with(text, start, letter, valid)
    if other:
        return GpqaReading(None, None, f"hedged between {letter} and {other}")
    if _CONDITION_OPENS_RE.match(sentence_before(text, start)) and _CONDITION_AFTER_RE.match(text, end):
        # "If X, the answer is C; if Y, it is B": one answer per condition, none committed.
        return GpqaReading(None, None, f"answer {letter} holds only under a condition with an alternative")
    if options:
        quoted = _conflict(text, start, letter, letters, options)
        if quoted:
            return GpqaReading(None, None, f"letter {letter} is given with the text of option {quoted}",
                               ambiguous=(letter, quoted))
    return GpqaReading(letter, via)
