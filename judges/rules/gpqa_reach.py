"""Where a GPQA answer letter can be read from: a map of a long text, found at C speed, that lets the readers
skip trigger words no letter can follow or precede (a megabyte of "Answer:\\n" or "is correct ") without
trying a pattern, or even a Python gate, at each.

The map rests on what every letter the gated rules read looks like (gpqa.py anchors, gpqa_leadins.after_leadin
and letter_verdicts):
- an ASCII letter not followed by a letter or digit, and not preceded by a letter, except right after
  one of AFTER_WORDS ("the answer is likelyC", "optionC is correct");
- after its trigger word, reached without passing any of STOPS (no pattern skips sentence punctuation)
  and passing at most one colon (the one of "Answer: C" or "the answer is: C"; a lead-in that is itself
  a colon may pass one more);
- before its verdict word ("C is correct"), at most BEFORE_REACH characters before it.
A trigger outside these spans yields nothing, so skipping it changes no reading. A new pattern that reads a
letter breaking these conditions must not be gated by this map.
"""
from __future__ import annotations

import functools
import re

from judges.rules.vocabulary import alternation

# Words a letter may directly follow in the anchor patterns (gpqa._AFTER_COPULA's words, "option", "choice").
AFTER_WORDS = ("likely", "probably", "therefore", "thus", "indeed", "clearly", "definitely", "then", "still",
               "actually", "certainly", "now", "donc", "also", "daher", "entonces", "la", "le", "die", "der", "el",
               "option", "choice", "opción", "opcion", "choix", "variante", "antwort")
# The same flags as the patterns' letters (re.IGNORECASE also matches letters such as the Kelvin sign).
_LETTER_RE = re.compile(r"[A-Za-z](?![A-Za-z0-9])(?:(?<![A-Za-z].)|"
                        + "|".join(f"(?<={re.escape(w)}.)" for w in AFTER_WORDS) + ")", re.IGNORECASE)
# The same on the lower-cased text of an ASCII response, in two faster scans: a lookbehind first fails at
# once inside words, and a literal alternation lets re skip to its words.
_ASCII_LETTER_RE = re.compile(r"(?<![a-z])[a-z](?![a-z0-9])")
_ASCII_AFTER_WORD_RE = re.compile(alternation(w for w in AFTER_WORDS if w.isascii()) + r"(?=[a-z](?![a-z0-9]))")
GATED_CHARS = 16_384  # shorter texts are read without the map: counting their trigger words would cost more than it saves
STOPS = ".,;!?"
BEFORE_REACH = 40  # letter_verdicts looks this far back from its verdict word
Spans = list[tuple[int, int]]  # sorted, disjoint, inclusive (lo, hi)


class LetterReach:
    """The letters of one text and the spans of positions that can reach one."""

    def __init__(self, text: str) -> None:
        self.text = text
        if text.isascii():
            low = text.lower()
            self.letters = sorted([m.start() for m in _ASCII_LETTER_RE.finditer(low)]
                                  + [m.end() for m in _ASCII_AFTER_WORD_RE.finditer(low)])
        else:
            self.letters = [m.start() for m in _LETTER_RE.finditer(text)]

    @functools.cached_property
    def forward(self) -> Spans:
        """Positions p with a letter q >= p, no stop and at most one colon in text[p:q] (anchors)."""
        return self._forward(1)

    @functools.cached_property
    def forward_two_colons(self) -> Spans:
        """The same with at most two colons (lead-ins, which may start at a colon)."""
        return self._forward(2)

    def _forward(self, colons: int) -> Spans:
        # A position before the previous letter that reaches q reaches that letter too (fewer colons, no stop),
        # so each letter q adds only positions after the previous one.
        spans: Spans = []
        prev = 0
        for q in self.letters:
            lo = max(prev, max(self.text.rfind(c, prev, q) for c in STOPS) + 1)
            end = q
            for _ in range(colons + 1):
                end = max(self.text.rfind(":", prev, end), self.text.rfind("：", prev, end))
                if end < 0:
                    break
            else:
                lo = max(lo, end + 1)  # past the colon one too many back from q
            if spans and lo <= spans[-1][1] + 1:
                spans[-1] = (spans[-1][0], q)
            else:
                spans.append((lo, q))
            prev = q
        return spans

    @functools.cached_property
    def backward(self) -> Spans:
        """Positions p with a letter in [p - BEFORE_REACH, p)."""
        return merge((q + 1, q + BEFORE_REACH) for q in self.letters)


@functools.lru_cache(maxsize=2)
def letter_reach(text: str) -> LetterReach:
    """The map of text, built once however many rules ask for it."""
    return LetterReach(text)


def merge(spans) -> Spans:
    """Sorted, disjoint spans covering the same positions."""
    merged: Spans = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        elif hi >= lo:
            merged.append((lo, hi))
    return merged


def starts_in(low: str, word: str, spans: Spans) -> list[int]:
    """Every place word starts inside the spans (overlapping occurrences too), in order."""
    found = []
    n = len(word)
    for lo, hi in spans:
        p = low.find(word, lo, hi + n)
        while p >= 0:
            found.append(p)
            p = low.find(word, p + 1, hi + n)
    return found
