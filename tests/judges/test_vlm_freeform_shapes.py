"""Shapes from the seventh corpus batch (a vision-language model answering MMMU in free form; tests/judges/real):
the letter bracketed between "the answer" and its verb, a true-or-false statement answered with its word first,
an option's text as the predicate of an opening sentence that the rest explains, an approximate value, and a reply
that only lists some options. Responses written here for the purpose, not copied."""
from __future__ import annotations

import pytest

from judges.rules.gpqa import read_letter

FOUR = ("A", "B", "C", "D")


@pytest.mark.parametrize("response, letter", [
    ("Adding the two flows gives 41 L/s, so the answer (C) is the nearest one.", "C"),
    ("The voltage drop works out to 12 V. The answer (A) is 12 V.", "A"),
    ("Our estimate for year nine is 3,410 units; the answer (D) would be the best fit.", "D"),
])
def test_a_letter_bracketed_between_answer_and_its_verb(response, letter):
    assert read_letter(response, FOUR, ["12 V", "20 V", "41 L/s", "3,410"]).letter == letter


@pytest.mark.parametrize("response", [
    "The answer (B) is incorrect, since the flow would have to double.",
    "The answer (B) is not supported by the table.",
])
def test_a_bracketed_letter_judged_wrong_is_no_answer(response):
    assert read_letter(response, FOUR, ["1", "2", "3", "4"]).letter is None


@pytest.mark.parametrize("response, options, letter", [
    ("False. The two bars have different heights, so the means differ.", ["True.", "False."], "B"),
    ("**True.**\n\nEvery shop in the table sold more in June than in May.", ["True", "False"], "A"),
])
def test_a_true_or_false_statement_answered_with_its_word_first(response, options, letter):
    assert read_letter(response, ("A", "B"), options).letter == letter


def test_true_or_false_opening_needs_that_pair_of_options():
    assert read_letter("False. The claim ignores friction.", ("A", "B"), ["3 N", "5 N"]).letter is None


def test_an_option_as_the_predicate_of_the_opening_sentence():
    response = ("The style most clearly shown by this vase is the Geometric period. Its bands of meanders and the "
                "stylised figures are typical of pottery made in Athens at that time.")
    options = ["the Geometric period", "the Hellenistic period", "the Byzantine era", "the Baroque era"]
    assert read_letter(response, FOUR, options).letter == "A"


def test_an_opening_predicate_does_not_count_when_another_option_is_named_later():
    response = ("The style most clearly shown by this vase is the Geometric period. Some read the figures as "
                "the Hellenistic period instead.")
    options = ["the Geometric period", "the Hellenistic period", "the Byzantine era", "the Baroque era"]
    assert read_letter(response, FOUR, options).letter is None


def test_an_approximate_value_is_still_the_options_value():
    response = "The ratio of the two section moduli is approximately 2.35, which is what the shape factor means."
    assert read_letter(response, ("A", "B", "C"), ["1.85", "2.35", "2.95"]).letter == "B"


@pytest.mark.parametrize("response", [
    "(A) minor (C) augmented (D) perfect",
    "(B) 12 cm (D) 18 cm",
])
def test_a_reply_that_only_lists_options_chooses_none(response):
    assert read_letter(response, FOUR, ["minor", "12 cm", "augmented", "perfect"]).letter is None


def test_a_reply_of_one_label_and_its_text_still_reads():
    assert read_letter("(C) augmented", FOUR, ["minor", "12 cm", "augmented", "perfect"]).letter == "C"


def test_an_opening_predicate_does_not_count_in_a_reply_cut_off_mid_derivation():
    response = ("The speed of the scale model is 1.4 m/s. Scaling by the square root of the length ratio, the "
                "prototype speed is 1.4 m/s * sqrt(300 / 3) = 1.4 * 10 = 14 m/s, and in knots that is 14 * 1.944 =")
    assert read_letter(response, ("A", "B", "C"), ["14 m/s", "1.4 m/s", "20 m/s"]).letter != "B"
