"""The gates that let the GPQA reader skip dense trigger words (judges/rules/gpqa_reach.py) change no reading:
every golden response, padded with hundreds of trigger words so the gates are on, reads the same with the
gates on and off."""
from __future__ import annotations

import random
import re

import pytest

from judges.rules import gpqa, gpqa_leadins, gpqa_reach
from judges.rules.extract import lower_same_length
from tests.judges.golden.gpqa_cases import CASES

PADS = {
    "answer-colon-lines": "Answer:\n" * 80,
    "answer-phrases": "the answer is 1. " * 80,
    "answer-words": "answer answer " * 80,
    "verdict-words": "is correct " * 80,
    "lead-ins": "is: " * 80,
    "option-words": "option choice " * 80,
    "option-list-lines": "A) x\nB) y\n" * 40,
}
OPTIONS = ["ethyl acetate", "methyl propanoate", "butanoic acid", "propyl formate"]


def _reading(response: str, letters: tuple[str, ...]) -> tuple:
    r = gpqa.read_letter(response, letters, OPTIONS if len(letters) == 4 else None)
    return r.letter, r.via, r.note, r.ambiguous


@pytest.fixture(autouse=True)
def _gated_at_any_length(monkeypatch):
    """The gates are on from the first character here, so that short padded responses exercise them."""
    monkeypatch.setattr(gpqa, "GATED_CHARS", 0)
    monkeypatch.setattr(gpqa_leadins, "GATED_CHARS", 0)


def _ungated(monkeypatch) -> None:
    monkeypatch.setattr(gpqa, "GATED_FROM", 10**9)
    monkeypatch.setattr(gpqa_leadins, "GATED_FROM", 10**9)


@pytest.mark.parametrize("pad", PADS)
def test_gates_change_no_reading_of_the_golden_responses(pad, monkeypatch):
    texts = []
    for case in CASES:
        letters = tuple(case.get("letters", gpqa.DEFAULT_LETTERS))
        texts += [(PADS[pad] + case["response"], letters), (case["response"] + "\n" + PADS[pad], letters)]
    gated = [_reading(text, letters) for text, letters in texts]
    _ungated(monkeypatch)
    assert [_reading(text, letters) for text, letters in texts] == gated


def test_the_gates_are_on_for_padded_responses():
    """The check above means something only if the gates skip trigger words there."""
    text = PADS["answer-phrases"] + "The answer is (C)."
    low = lower_same_length(text)
    kept, skipped = gpqa._trigger_positions(text, low)
    assert skipped and 0 < len(kept) < low.count("answer") // 10


@pytest.mark.parametrize("tail,letter", [
    ("optionC is the correct one.", "C"),          # a letter right after "option"
    ("So the answer is likelyB", "B"),              # a letter right after an adverb of the copula
    ("Answer:\n\n**D**", "D"),
    ("(A) is the correct answer", "A"),             # read backwards from the answer word
    ("The product is:\n\nB. methyl propanoate", "B"),
    ("Clearly, C is correct.", "C"),
])
def test_letters_the_gates_must_keep(tail, letter, monkeypatch):
    for pad in PADS.values():
        text = pad + tail
        got = _reading(text, gpqa.DEFAULT_LETTERS)
        assert got[0] == letter, (text[-80:], got)
        with monkeypatch.context() as patch:
            _ungated(patch)
            assert _reading(text, gpqa.DEFAULT_LETTERS) == got


def test_the_ascii_letter_scan_equals_the_general_one():
    rng = random.Random(3)
    pieces = ["likely", "option", "then", "le", "C", "c", "x", "1", " ", ".", "(", ")", "\n", "_", "A)", "is", "K"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert gpqa_reach.LetterReach(text).letters == [m.start() for m in gpqa_reach._LETTER_RE.finditer(text)], text


@pytest.mark.parametrize("text", ["answer: x, answer; then answer: C and more.", "Answer:\nAnswer:\nAnswer: C",
                                  "a: b: c: : d", "is: : x: y. z"])
def test_forward_spans_reach_a_letter_without_a_stop_or_a_colon_too_many(text):
    reach = gpqa_reach.LetterReach(text)
    for colons, spans in ((1, reach.forward), (2, reach.forward_two_colons)):
        inside = {p for lo, hi in spans for p in range(lo, hi + 1)}
        for p in range(len(text)):
            reachable = any(q >= p and not re.search(r"[.,;!?]", text[p:q]) and text.count(":", p, q) <= colons
                            for q in reach.letters)
            assert (p in inside) == reachable, (colons, p)


def test_every_word_a_letter_may_follow_is_known_to_the_map():
    """A word added to the anchor's adverbs ("the answer is likely C") must join gpqa_reach.AFTER_WORDS, or
    the gates would skip "is <word>C" in long texts."""
    words = set(re.findall(r"[^\W\d_]{2,}", gpqa._AFTER_COPULA)) - {"most", "very", "more", "quite"}
    assert words <= set(gpqa_reach.AFTER_WORDS), words - set(gpqa_reach.AFTER_WORDS)
