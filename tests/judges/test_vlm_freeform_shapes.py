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


# Shapes from the same batch read since rules-v10: the conclusion is the closing sentence of a long last line, the
# option's words are carried by the opening sentence, or a long derivation closes by committing to one value.
POLICIES = ["rising tariffs slowed the trade between the two regions",
            "the new harbour drew merchants away from the old town",
            "a run of poor harvests emptied the markets",
            "the guilds closed their doors to foreign traders"]


def test_the_closing_sentence_of_a_long_last_line_states_the_option():
    response = ("Looking at the decay chain in the figure, the mass number falls by four at the first step and the "
                "atomic number by two, which is what the emitted particle carries away each time. So the unknown "
                "particle here is an alpha particle.")
    assert read_letter(response, FOUR, ["an alpha particle", "a positron", "a neutron", "a proton"]).letter == "A"


def test_a_long_last_line_that_weighs_an_option_without_concluding_is_no_answer():
    response = ("Looking at the decay chain in the figure, the mass number falls by four at the first step and the "
                "atomic number by two, which is what the emitted particle carries away each time. It could be a "
                "neutron if the chain were different.")
    assert read_letter(response, FOUR, ["an alpha particle", "a positron", "a neutron", "a proton"]).letter is None


def test_an_opening_sentence_that_carries_one_options_words():
    response = ("The engraving argues that the new harbour drew merchants away from the old town. It shows empty "
                "stalls on one bank and crowded quays on the other.")
    assert read_letter(response, FOUR, POLICIES).letter == "B"


@pytest.mark.parametrize("response", [
    # another option's words appear later in the reply
    "The engraving argues that the new harbour drew merchants away from the old town. Some say a run of poor "
    "harvests emptied the markets instead.",
    # the opening sentence denies it
    "The engraving does not argue that the new harbour drew merchants away from the old town. It shows a fair.",
])
def test_an_opening_quote_is_not_read_when_contradicted(response):
    assert read_letter(response, FOUR, POLICIES).letter is None


def test_a_value_option_inside_the_opening_sentence_is_not_a_quote():
    # short options (values, single words) inside a sentence are mentions; only statements count as quotes
    response = "The speed stays 60 m/s through the fall, which none of the options lists.\n\nNo option fits."
    assert read_letter(response, FOUR, ["90 m/s", "120 m/s", "150 m/s", "60 m/s"]).letter is None


def test_a_long_derivation_closing_on_one_options_value():
    steps = "\n".join(f"Step {i}: the premium on factor {i} moves the expected return by {i}%." for i in range(1, 9))
    response = (f"{steps}\nAdding the factors to the risk-free rate, the expected return is 5% + 2% = 7%. "
                "Therefore, the expected return on the stock is 7%, which matches one of the choices.")
    assert read_letter(response, FOUR, ["5%", "7%", "13%", "15.5%"]).letter == "B"


def test_a_long_derivation_whose_last_sentence_does_not_commit_is_no_answer():
    steps = "\n".join(f"Step {i}: the premium on factor {i} moves the expected return by {i}%." for i in range(1, 9))
    response = f"{steps}\nAt this point the expected return is 7%, before the energy factor is added."
    assert read_letter(response, FOUR, ["5%", "7%", "13%", "15.5%"]).letter is None
