"""Multiple-choice grading: the last anchored answer letter within the sample's choice set."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from judges.rules.extract import FULLWIDTH, committed_text, retracted_after

PARSER_VERSION = "gpqa-v1"
DEFAULT_LETTERS = ("A", "B", "C", "D")

# Markdown, math and bracket wrappers allowed between an anchor and its letter.
_WRAP = r"(?:[\s*_$]|\\boxed\s*\{|\\(?:text|textbf|textrm|mathrm|mathbf)\s*\{|\\\(|\(|\[|\{|(?:option|choice)\b)*"
# After the letter: no further word character (so "Cannot" and "Carbon" are not C) ...
_AFTER = r"(?![A-Za-z0-9])"
# ... and not hedged between two letters ("B or C", "A/C", "A, B").
_HEDGE = r"(?!\)?\**\s*(?:or|and|/|,|&)\s*\(?(?-i:[A-Z])(?![A-Za-z0-9]))"

_ANCHORS = (
    r"\b(?:final\s+|correct\s+|best\s+)?answer[ \t]*(?:\*\*|__)?[ \t]*[:：]"
    r"|\b(?:(?:the|my|our)\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?(?:answer|option|choice)\s+"
    r"(?:is|would\s+be|should\s+be)\b[ \t]*:?"
    r"|^[ \t#>*_]*final\s+answer[ \t*_]*$"
)
_BOXED = r"\\boxed\s*\{\s*(?:\\(?:text|textbf|textrm|mathrm|mathbf)\s*\{\s*)?\(?"
_QUOTES = "\"'“‘`«「"
_FOLLOW_OK = ".,;:!)]}*_$\\\n"  # what may follow an unwrapped lower-case letter (so "is a mixture" is no answer)


@dataclass
class GpqaReading:
    """The letter found (upper case, in the choice set) or None, how it was found, and a note."""

    letter: str | None
    via: str | None
    note: str | None = None


@functools.lru_cache(maxsize=32)
def _patterns(letters: tuple[str, ...]) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    cls = "".join(sorted({c.upper() for c in letters} | {c.lower() for c in letters}))
    upper = "".join(sorted({c.upper() for c in letters}))
    anchored = re.compile(
        rf"(?:{_ANCHORS})(?P<wrap>{_WRAP})(?P<letter>[A-Za-z]){_AFTER}{_HEDGE}"
        rf"|{_BOXED}(?P<bletter>[A-Za-z])\)?\s*\}}?\s*\}}"
        rf"|\b(?:option|choice)\s*\(?(?P<oletter>[{cls}])\)?\s+is\s+(?:the\s+)?(?:correct|right|best)\b"
        rf"|(?:^|(?<=[\s(*]))\(?(?P<sletter>(?-i:[{upper}]))\)?\**\s+is\s+the\s+(?:correct|right|best)\s+(?:answer|choice|option)\b",
        re.IGNORECASE | re.MULTILINE,
    )
    # A line that is nothing but the letter: "C", "(C)", "**C.**", "$\boxed{C}$" is covered above.
    bare_line = re.compile(rf"^[ \t*_#>(\[]*(?P<letter>[{upper}])[ \t*_.)\]:]*$", re.MULTILINE)
    bare_whole = re.compile(rf"[\s*_#>(\[$]*(?P<letter>[{cls}])(?:[\s*_.)\]:$]*|\)\s+\S[^\n]*)", re.DOTALL)
    return anchored, bare_line, bare_whole


def read_letter(response: str, letters: tuple[str, ...] = DEFAULT_LETTERS) -> GpqaReading:
    """The last committed answer letter in a response, or None (no answer)."""
    text, think_open = committed_text(response)
    text = text.translate(FULLWIDTH)
    anchored, bare_line, bare_whole = _patterns(tuple(letters))
    valid = {c.upper() for c in letters}

    whole = bare_whole.fullmatch(text.strip())
    if whole:
        return GpqaReading(whole.group("letter").upper(), "bare")

    best: tuple[int, int, str, str] | None = None  # (start, end, letter, via)
    rejected: tuple[int, str] | None = None  # the last out-of-set letter and where
    for m in anchored.finditer(text):
        name = next(k for k in ("letter", "bletter", "oletter", "sletter") if m.group(k))
        letter = m.group(name)
        if m.start() > 0 and text[m.start() - 1] in _QUOTES:
            continue  # a quoted format instruction ('end with "Answer: X"'), not an answer
        if name == "letter" and letter.islower():
            # An unwrapped lower-case letter after "the answer is" is usually the article "a".
            wrapped = any(c in m.group("wrap") for c in "([{*\\$")
            nxt = text[m.end():m.end() + 1]
            if not wrapped and nxt and nxt not in _FOLLOW_OK:
                continue
        if letter.upper() not in valid:
            if letter.upper() not in ("I", "X"):  # "Answer: I think...", a placeholder X: not choices
                rejected = (m.start(name), letter.upper())
            continue
        best = (m.start(name), m.end(), letter.upper(), "anchor")
    for m in bare_line.finditer(text):
        if best is None or m.start() > best[0]:
            best = (m.start("letter"), m.end(), m.group("letter"), "line")
    if rejected and (best is None or rejected[0] > best[0]):
        # The last committed letter is outside the choice set: no valid answer, not an earlier one.
        return GpqaReading(None, None, f"letter {rejected[1]} is not a choice")
    if best is None:
        return GpqaReading(None, None, "think block not closed" if think_open else None)
    start, end, letter, via = best
    if retracted_after(text, end):
        return GpqaReading(None, None, f"answer {letter} retracted afterwards")
    return GpqaReading(letter, via)
