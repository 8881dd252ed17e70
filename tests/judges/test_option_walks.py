"""Shapes from the eleventh and twelfth corpus batches (R1 distills with their thinking skipped, GPT-4 and Qwen-VL on
MathVista and MMMU, Gemini on MMLU-Pro; tests/judges/real): a walk through the options after the answer, two letters
with their words, a bracketed non-answer, a box that restates the closing sentence, True/False beside a third option.
Responses written here for the purpose, not copied."""
from __future__ import annotations

import pytest

from judges.rules.gpqa import read_letter

FOUR = tuple("ABCD")
CLAIMS = ["It must be written down.", "It is spoken.", "It needs proof of harm.", "It is always a crime."]


def test_a_walk_through_the_options_after_the_answer_is_not_a_choice():
    response = ("The correct answer is B. Slander is defamation that is spoken.\n\n**Why the others fail:**\n\n"
                "- **Option A:** False. Writing makes it libel.\n- **Option C:** True only for some categories.\n"
                "- **Option D:** False. It is usually a civil wrong.")
    assert read_letter(response, FOUR, CLAIMS).letter == "B"


def test_one_option_line_after_a_lead_in_is_still_the_choice():
    assert read_letter("Having weighed them all, my pick:\n\n- **Option C:** it needs proof of harm.", FOUR,
                       CLAIMS).letter == "C"


@pytest.mark.parametrize("response", [
    "The diagonals come out as 13 and 26, so the correct answers are (B) 13 and (C) 26.",
    "The changes seen in the muscle are (A) apoptosis and (B) free radical injury.",
])
def test_two_letters_each_with_its_words_are_no_answer(response):
    assert read_letter(response, FOUR, ["apoptosis", "13", "26", "free radical injury"]).letter is None


def test_a_bracketed_none_of_the_options_is_no_answer():
    response = "Option C: 45,000 yards gives a loss.\n\nThe answer is (None of the options are correct)"
    assert read_letter(response, FOUR, ["40,000 yards", "42,000 yards", "45,000 yards", "50,000 yards"]).letter is None


def test_a_box_that_restates_the_closing_sentence():
    response = ("4 x 3 x 2 x 1 = 24 ways to order four letters.\n\n**Answer:**\nThe number of code words is **24**."
                "\n\n\\[\n\\boxed{24}\n\\]")
    assert read_letter(response, FOUR, ["12", "18", "24", "36"]).letter == "C"


def test_a_box_after_a_sentence_with_another_value_is_not_read_by_restating():
    response = "We found 18 ways before removing repeats.\n\n\\[\n\\boxed{24}\n\\]"
    assert read_letter(response, FOUR, ["12", "18", "24", "36"]).letter is None


@pytest.mark.parametrize("response, letter", [
    ("True. The picture is indeed the one the caption names.", "A"),
    ("False. The caption names another painter.", "B"),
])
def test_true_or_false_opening_beside_a_third_option(response, letter):
    assert read_letter(response, ("A", "B", "C"), ["True", "False", "Not enough evidence"]).letter == letter


def test_a_true_opening_needs_both_words_among_the_options():
    assert read_letter("True. It is the one named.", ("A", "B", "C"), ["True", "Maybe", "Unknown"]).letter is None


def test_a_figure_label_after_a_participle():
    response = "The pacemaker of the heart, the sinoatrial node, is indicated by B."
    assert read_letter(response, FOUR, ["(A)", "(B)", "(C)", "(D)"]).letter == "B"


@pytest.mark.parametrize("response, letter", [
    ("The largest part of the lung is the superior lobe.", "C"),
    ("The part that holds the heart is the cardiac notch.", "B"),
])
def test_a_closing_predicate_in_the_singular_of_a_plural_option(response, letter):
    assert read_letter(response, FOUR, ["Inferior lobes", "Cardiac notch", "Superior lobes", "Middle lobe"]).letter == letter


def test_the_exact_option_text_wins_over_its_plural():
    assert read_letter("The largest part is the upper lobe.", FOUR,
                       ["Upper lobe", "Upper lobes", "Lower lobe", "Notch"]).letter == "A"


# Zero-shot replies to "A) ..." option lines with no answer format asked for (ThoughtSource's runs of Flan-T5 and
# GPT-3.5-turbo, tests/judges/real).
FIVE = tuple("ABCDE")
SPECIMENS = ["blood", "urine", "saliva", "CSF", "stool"]


@pytest.mark.parametrize("response, letter", [
    ("The virus is found in the spinal fluid. A CSF sample confirms it by PCR. D.", "D"),
    ("Warming oceans hold less gas. Global warming is lowering the world's amount of D).", "D"),
    ("Cats ask for food when hungry. The cat kept asking, it was that time of day and it was C.", "C"),
])
def test_a_lone_letter_closing_the_reply(response, letter):
    assert read_letter(response, FIVE, SPECIMENS).letter == letter


@pytest.mark.parametrize("response", [
    "Use the steps above and select the appropriate option (A, B, C, D, or E).",
    "Both fit the symptoms, so choose between B and D).",
    "The specimen is sent to the lab in tube D",  # no stop, no bracket: cut off mid-sentence
])
def test_a_closing_letter_in_a_list_or_unfinished_is_no_answer(response):
    assert read_letter(response, FIVE, SPECIMENS).letter is None


def test_two_labels_without_opening_brackets_given_together():
    response = "Both widen the vessels.\n\nTherefore, the correct answers are B) urine and C) saliva."
    assert read_letter(response, FIVE, SPECIMENS).letter is None


WORKERS = ["Enslaved people in the colonies", "Monks in a monastery", "Sailors on a whaling ship",
           "Factory workers in the Industrial Revolution"]


def test_an_unbracketed_label_with_its_own_words_inside_a_sentence():
    response = ("The young women in the letter are most like D. Factory workers in the Industrial Revolution. Both "
                "worked long hours for low pay.")
    assert read_letter(response, FOUR, WORKERS).letter == "D"


def test_an_unbracketed_label_with_another_options_words_is_not_read():
    response = "The young women in the letter are most like D. Monks in a monastery. Both lived apart."
    assert read_letter(response, FOUR, WORKERS).letter is None
