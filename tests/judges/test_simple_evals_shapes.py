"""Shapes from the sixth corpus batch (simple-evals prompts, chat models among them Russian ones; tests/judges/real):
a Russian answer word, an answer line wrapped in LaTeX text, a percentage stated as a share, and "none of the above"
followed by the value the model found. Responses written here for the purpose, not copied."""
from __future__ import annotations

import pytest

from judges.rules.aime import read_aime
from judges.rules.gpqa import read_letter

TEN = tuple("ABCDEFGHIJ")


@pytest.mark.parametrize("response, value", [
    ("Сначала сложим: 12 + 9 = 21, затем 21 - 4 = 17.\n\nОтвет: 17", 17),
    ("Всего 3 * 8 = 24 яблока, и ещё 6.\nответ: $30$.", 30),
    ("Итого 5 + 7 = 12.\n\n**Ответ:** 12", 12),
])
def test_russian_answer_word_anchors_an_integer(response, value):
    assert read_aime(response).value == value


def test_russian_word_inside_a_longer_word_is_no_anchor():
    # "безответ" is not the answer word; with no anchor nothing in the prose is a committed value
    assert read_aime("We add 4 and 5; безответ: 12 then 9 more.").value != 12


def test_russian_answer_word_anchors_a_letter():
    response = "Упростим: 2^3 = 8, значит вариант (C) 6 не подходит, а (F) 8 подходит.\n\nОтвет: F"
    assert read_letter(response, TEN).letter == "F"


@pytest.mark.parametrize("response, value", [
    ("So the count left over is:\n\\[\n\\text{Answer: 312}\n\\]", 312),
    ("Hence $\\text{Final answer: 45}$", 45),
])
def test_an_answer_inside_latex_text_ends_at_its_brace(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("response, value", [
    ("3 of 12 bikes are red, so (3 / 12) * 100 = 25%.\n\nAnswer: 25% of the bikes are red.", 25),
    ("Answer: 40% of the students are in the choir.", 40),
    # a percentage of a number is a calculation, not a stated share
    ("Answer: 20% of 50 is 10", None),
])
def test_a_percentage_stated_as_a_share(response, value):
    assert read_aime(response).value == value


SPEEDS = ["90 m/s", "120 m/s", "150 m/s", "60 m/s"]


@pytest.mark.parametrize("response", [
    "The horizontal speed stays 60 m/s, which no option lists.\n\nAnswer: None of the above (I get 60 m/s)",
    "My result is listed nowhere.\n\n**Answer:** none of these, as I found 60 m/s",
])
def test_none_of_the_above_then_a_value_is_no_answer(response):
    assert read_letter(response, ("A", "B", "C", "D"), SPEEDS).letter is None


def test_none_of_the_above_is_read_when_it_is_an_option():
    options = ["12", "15", "18", "None of the above"]
    assert read_letter("No listed count fits.\n\nAnswer: None of the above", ("A", "B", "C", "D"), options).letter == "D"
