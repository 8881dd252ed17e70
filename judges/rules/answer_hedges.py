"""Hedges the other rules miss: the letter read is the second of "(B) or (D)", or a later answer statement
offers two letters ("So the answer is either B or D."), which the anchors skip as no answer and which would
otherwise leave an earlier line's letter (in an answer list, another question's) standing."""
from __future__ import annotations

import re

# Right before the letter read: "(B) or (", "either B or ", "A, C or ", "option B or option ".
_ALTERNATIVE_BEFORE_RE = re.compile(
    r"(?<![A-Za-z0-9])\(?(?P<other>[A-Z])\)?(?:\*\*|__)?[ \t]*(?:,[ \t]*)?(?i:or)[ \t]+(?:(?i:option|choice)[ \t]+)?[*_(\[]{0,3}$")
_BEFORE_REACH = 40
# A later statement that gives two letters: "the answer is either B or D", "Answer: A or C", "answer is (A)/(C)"
# (singular words only: "the options are A, B, C, D" restates the choices). The pair of letters is found
# first, then the words before it: scanning for the words would try a pattern at every "answer".
_LETTER_PAIR_RE = re.compile(
    r"(?<![A-Za-z0-9])[(\[]{0,3}(?P<first>[A-Z])[*_)\]]{0,3}[ \t]*(?:,|/|(?i:or)\b)[ \t]*"
    r"(?:(?i:option|choice)[ \t]+)?[*_(\[]{0,3}(?P<second>[A-Z])(?![A-Za-z0-9])")
_STATEMENT_HEAD_RE = re.compile(
    r"\b(?i:answer|option|choice)\b(?![ \t]+(?i:choices|options|key)\b)[^\n.!?]{0,40}?(?:\b(?i:is|be)\b|:)"
    r"[ \t*_]{0,8}(?i:either[ \t]+)?$")
_HEAD_REACH = 80


def hedge_around(text: str, start: int, end: int, letter: str, letters: set[str]) -> str | None:
    """The two letters, when the letter at start..end is offered with another or a later statement hedges."""
    before = _ALTERNATIVE_BEFORE_RE.search(text, max(0, start - _BEFORE_REACH), start)
    if before and before.group("other") in letters and before.group("other") != letter:
        return f"{before.group('other')} and {letter}"
    for m in _LETTER_PAIR_RE.finditer(text, end):
        first, second = m.group("first"), m.group("second")
        if first != second and first in letters and second in letters and \
                _STATEMENT_HEAD_RE.search(text, max(end, m.start() - _HEAD_REACH), m.start()):
            return f"{first} and {second}"
    return None
