"""One vocabulary for the rules readers: every answer word reaches every rule built from the list."""
from __future__ import annotations

import pytest

from judges.rules import gpqa
from judges.rules.normalise import final_answer_text
from judges.rules.vocabulary import ANSWER_WORDS, TEXT_WRAPPERS

OPTIONS = ["ethyl acetate", "methyl propanoate", "butanoic acid", "propyl formate"]


@pytest.mark.parametrize("word", ANSWER_WORDS)
def test_every_answer_word_anchors_a_letter_and_a_statement(word):
    assert gpqa.read_letter(f"{word.capitalize()}: C", options=OPTIONS).letter == "C"
    # A statement in words after the same answer word names the option by its text.
    reading = gpqa.read_letter(f"Final {word} is: butanoic acid", options=OPTIONS)
    assert (reading.letter, reading.via) == ("C", "option text")


@pytest.mark.parametrize("wrapper", TEXT_WRAPPERS)
def test_every_latex_wrapper_is_unwrapped_by_every_reader(wrapper):
    assert final_answer_text(f"\\{wrapper}{{25}}") == "25"
    assert gpqa.read_letter(f"\\boxed{{\\{wrapper}{{B}}}}", options=OPTIONS).letter == "B"


def test_unicode_spaces_are_one_table():
    assert gpqa.read_letter("Réponse\u00a0:\u3000D", options=OPTIONS).letter == "D"
    assert final_answer_text("1\u2009000") == "1000"
