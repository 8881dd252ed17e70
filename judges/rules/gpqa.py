"""Multiple-choice grading: the last anchored answer letter within the sample's choice set."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from judges.rules.extract import FULLWIDTH, committed_text, lower_same_length, retracted_after

PARSER_VERSION = "gpqa-v1"
DEFAULT_LETTERS = ("A", "B", "C", "D")

# Markdown, math and bracket wrappers allowed between an anchor and its letter.
_WRAP = r"(?P<wrap>(?:[\s*_$]|\\boxed\s*\{|\\(?:text|textbf|textrm|mathrm|mathbf)\s*\{|\\\(|\(|\[|\{|(?:option|choice)\b)*)"
# After the letter: no further word character (so "Cannot" and "Carbon" are not C), and not
# hedged between two letters ("B or C", "A/C", "A, B").
_LETTER = r"(?P<letter>[A-Za-z])(?![A-Za-z0-9])(?!\)?\**\s*(?:or|and|/|,|&)\s*\(?(?-i:[A-Z])(?![A-Za-z0-9]))"
_I = re.IGNORECASE

# Every anchor contains one of these words; they are found with one fast scan of the lower-cased
# text, and the precise patterns below are only tried at those positions (matching at a fixed
# position is cheap, while scanning with a case-insensitive alternation is slow in Python's re).
_TRIGGER_RE = re.compile(r"answer|option|choice|boxed|答案")
_AT_ANSWER = (
    re.compile(rf"answer[ \t]*(?:\*\*|__)?[ \t]*[:：]{_WRAP}{_LETTER}", _I),           # Answer: C / **Answer:** C
    re.compile(rf"answer\s+(?:is|would\s+be|should\s+be)\b[ \t]*:?{_WRAP}{_LETTER}", _I),  # the answer is (C)
)
_AT_ZH = re.compile(rf"答案\s*(?:是|为|應該是|应该是)?\s*[:：]?{_WRAP}{_LETTER}", _I)  # 答案：C / 正确答案是 (C)
_AT_HEADING = re.compile(rf"answer[ \t*_]*$\n{_WRAP}{_LETTER}", _I | re.MULTILINE)    # ### Final Answer / **C**
_HEADING_PREFIX_RE = re.compile(r"[ \t#>*_]*final\s+", _I)
_AT_OPTION = (
    re.compile(rf"(?:option|choice)\s+(?:is|would\s+be|should\s+be)\b[ \t]*:?{_WRAP}{_LETTER}", _I),
    re.compile(r"(?:option|choice)\s*\(?(?P<letter>[A-Za-z])\)?\s+is\s+(?:the\s+)?(?:correct|right|best)\b", _I),
)
_AT_BOXED = re.compile(
    r"boxed\s*\{\s*(?:\\(?:text|textbf|textrm|mathrm|mathbf)\s*\{\s*)?\(?(?P<letter>[A-Za-z])\)?\s*\}?\s*\}", _I)
# "(B) is the correct answer": read backwards from the trigger word.
_LETTER_BEFORE_RE = re.compile(r"(?:^|(?<=[\s(*]))\(?(?P<letter>[A-Z])\)?\**\s+is\s+the\s+(?:correct|right|best)\s+$")
# Words that may open an anchor phrase before the trigger ("the final answer is"), for the quote check.
_PHRASE_LEAD_RE = re.compile(r"(?:(?:the|my|our|final|correct|best|right)\s+)*$", _I)
_QUOTES = "\"'“‘`«「"
_FOLLOW_OK = ".,;:!)]}*_$\\\n"  # what may follow an unwrapped lower-case letter (so "is a mixture" is no answer)


@dataclass
class GpqaReading:
    """The letter found (upper case, in the choice set) or None, how it was found, and a note."""

    letter: str | None
    via: str | None
    note: str | None = None


@functools.lru_cache(maxsize=32)
def _bare_patterns(letters: tuple[str, ...]) -> tuple[re.Pattern, re.Pattern]:
    cls = "".join(sorted({c.upper() for c in letters} | {c.lower() for c in letters}))
    upper = "".join(sorted({c.upper() for c in letters}))
    # A line that is nothing but the letter ("C", "(C)", "**C.**"), and a whole response that is.
    bare_line = re.compile(rf"^[ \t*_#>(\[]*(?P<letter>[{upper}])[ \t*_.)\]:]*$", re.MULTILINE)
    bare_whole = re.compile(rf"[\s*_#>(\[$]*(?P<letter>[{cls}])(?:[\s*_.)\]:$]*|\)\s+\S[^\n]*)", re.DOTALL)
    return bare_line, bare_whole


def _anchored(text: str, low: str):
    """Every anchored letter as (match, phrase start); phrase start is where the anchor's words begin."""
    for t in _TRIGGER_RE.finditer(low):
        p = t.start()
        if p > 0 and (low[p - 1].isascii() and low[p - 1].isalnum() or low[p - 1] == "_") and t.group() != "boxed":
            continue  # inside a longer word ("reanswer")
        word = t.group()
        if word == "答案":
            m = _AT_ZH.match(text, p)
            if m:
                yield m, p
            continue
        if word == "boxed":
            if p > 0 and text[p - 1] == "\\":
                m = _AT_BOXED.match(text, p)
                if m:
                    yield m, p - 1
            continue
        patterns = _AT_ANSWER if word == "answer" else _AT_OPTION
        for pat in patterns:
            m = pat.match(text, p)
            if m:
                lead = _PHRASE_LEAD_RE.search(text, max(0, p - 40), p)
                yield m, lead.start() if lead else p
                break
        if word == "answer":
            line_start = text.rfind("\n", 0, p) + 1
            if _HEADING_PREFIX_RE.fullmatch(text, line_start, p):
                m = _AT_HEADING.match(text, p)
                if m:
                    yield m, line_start
        if low.find("is the", max(0, p - 40), p) >= 0:
            before = _LETTER_BEFORE_RE.search(text, max(0, p - 60), p)
            if before:
                yield before, before.start()


def _scan(text: str, bare_line: re.Pattern, valid: set[str]):
    """The last valid candidate (letter position, end, letter, via) and the last out-of-set letter."""
    low = lower_same_length(text)
    best: tuple[int, int, str, str] | None = None
    rejected: tuple[int, str] | None = None
    for m, phrase_start in _anchored(text, low):
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
        if letter.upper() not in valid:
            if letter.upper() not in ("I", "X") and (rejected is None or pos > rejected[0]):
                rejected = (pos, letter.upper())  # "Answer: I think..." and a placeholder X are no choices
            continue
        if best is None or pos > best[0]:
            best = (pos, m.end(), letter.upper(), "anchor")
    for m in bare_line.finditer(text):
        if best is None or m.start("letter") > best[0]:
            best = (m.start("letter"), m.end(), m.group("letter"), "line")
    return best, rejected


def read_letter(response: str, letters: tuple[str, ...] = DEFAULT_LETTERS) -> GpqaReading:
    """The last committed answer letter in a response, or None (no answer)."""
    text, think_open = committed_text(response)
    if not text.isascii():
        text = text.translate(FULLWIDTH)
    bare_line, bare_whole = _bare_patterns(tuple(letters))
    valid = {c.upper() for c in letters}

    whole = bare_whole.fullmatch(text.strip())
    if whole:
        return GpqaReading(whole.group("letter").upper(), "bare")

    best, rejected = _scan(text, bare_line, valid)
    if rejected and (best is None or rejected[0] > best[0]):
        # The last committed letter is outside the choice set: no valid answer, not an earlier one.
        return GpqaReading(None, None, f"letter {rejected[1]} is not a choice")
    if best is None:
        return GpqaReading(None, None, "think block not closed" if think_open else None)
    start, end, letter, via = best
    if retracted_after(text, end):
        return GpqaReading(None, None, f"answer {letter} retracted afterwards")
    return GpqaReading(letter, via)
