"""Responses cut off by the token limit while the model was still thinking.

A `<think>` that never closes is handled where the committed text is found (extract.committed_text). When
the chat template opened the block, the response has no tag at all, and only the grade stage knows it was
cut off (finish_reason "length"); then a letter counts only if the model had settled on it: not a tentative
one ("perhaps the answer is C", "the answer is likely C"), and not one it went on to question ("... is A.
Wait, but ..."). A response that closed its thinking (`</think>`) is read as usual.
"""
from __future__ import annotations

import re

from judges.rules.gpqa_leadins import sentence_before

# Words that make a sentence's answer a guess rather than a choice.
_TENTATIVE_RE = re.compile(
    r"\b(?:perhaps|maybe|likely|probably|possibly|might|guess|not\s+(?:sure|certain)|i\s+think|i\s+believe)\b",
    re.IGNORECASE)
# Words that open a sentence reconsidering what came before (not "But"/"However" alone, which explanations
# use); searched word-first (no leading spaces in the pattern), the sentence start is checked in Python.
_RECONSIDER_RE = re.compile(
    r"\b(?:wait|hmm+|alternatively|actually|on\s+second\s+thought|let\s+me|no,|but\s+(?:wait|maybe|perhaps|actually))",
    re.IGNORECASE)
# Another letter offered as a guess later on: "so maybe it's D", "perhaps the answer is (B)".
_GUESSED_LETTER_RE = re.compile(
    r"\b(?i:maybe|perhaps|probably|possibly|likely)[ \t]+(?:(?i:it's|it’s|it\s+is|the\s+answer\s+is|option|choice)[ \t]+)?"
    r"\(?(?P<letter>[A-Z])(?![A-Za-z0-9])")
_SENTENCE_ENDS = ".!?:;\n"
_AFTER_SENTENCE_REACH = 200  # how far the rest of the letter's own sentence may run


def closed_thinking(response: str) -> bool:
    """Whether the response closes a thinking block (what follows `</think>` is its answer)."""
    return "</think" in response or "<|channel|>final<|message|>" in response  # or harmony's final channel


def _opens_sentence(text: str, k: int) -> bool:
    while k > 0 and text[k - 1] in " \t*_>#-":
        k -= 1
    return k == 0 or text[k - 1] in _SENTENCE_ENDS


def unsettled(text: str, start: int, end: int) -> bool:
    """Whether the letter at start..end is a guess or is questioned later: the sentence it is in is tentative,
    a later sentence opens by reconsidering ("Wait", "Alternatively", "But maybe"), or a later one guesses a letter."""
    own_end = end
    for own_end in range(end, min(len(text), end + _AFTER_SENTENCE_REACH)):
        if text[own_end] in ".!?\n" and (own_end + 1 == len(text) or text[own_end + 1].isspace()):
            break
    if _TENTATIVE_RE.search(sentence_before(text, start) + text[start:own_end]):
        return True
    for m in _RECONSIDER_RE.finditer(text, own_end):
        if _opens_sentence(text, m.start()):
            return True
    return _GUESSED_LETTER_RE.search(text, own_end) is not None
