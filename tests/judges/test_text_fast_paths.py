"""The readers' shortcuts for non-ASCII text give exactly what the plain versions give."""
from __future__ import annotations

import random

import pytest

from judges.rules.extract import _ASCII_LOWER, lower_same_length
from judges.rules.gpqa_options import MAX_SEGMENT_CHARS, tokens
from judges.rules.normalise import CharMap, fullwidth, unicode_spaces

# ASCII, curly quotes and dashes, letters whose lower case differs (É, Σ in final and inner position, ẞ),
# one whose lower case is two characters (İ), title-case digraphs, full-width forms and odd spaces.
ALPHABET = "aBcDxyZ0 .\n’—…ÉéİΣσςÀßẞǅǄＡｂ１：（）。\u00a0\u2009\u200b\ufeff"


def random_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def test_lower_same_length_lowers_ascii_only():
    for text in random_texts(20_000):
        got = lower_same_length(text)
        assert got == text.translate(_ASCII_LOWER), text
        assert len(got) == len(text)
    assert lower_same_length("RÉPONSE: B") == "rÉponse: b"


@pytest.mark.parametrize("charmap", [unicode_spaces, fullwidth], ids=["unicode_spaces", "fullwidth"])
def test_charmap_is_translate(charmap: CharMap):
    for text in random_texts(20_000, seed=1):
        assert charmap(text) == text.translate(charmap.table), text
    plain = "no mapped character here’s all"
    assert charmap(plain) is plain  # nothing to map: the same string, no copy


def test_tokens_reads_only_the_segment_limit_and_repeats_exactly():
    option = "\\hbar/\\sqrt{2} ×10^{5}  — a-b"
    first = tokens(option)
    assert tokens(option) == first and tokens(option + " ") == first
    long = "A " * MAX_SEGMENT_CHARS
    assert tokens(long) == tokens(long[:MAX_SEGMENT_CHARS])
