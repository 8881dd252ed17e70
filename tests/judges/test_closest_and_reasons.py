"""Letters given as the closest option, after a reason clause, or right after their own option's words; values that
differ from an option only by a degree sign or a unit every option shares (shapes from MedMCQA, MedQA, MMLU-Pro and
MathVista outputs in tests/judges/real, written here in our own words)."""
import pytest

from judges.rules import gpqa

LETTERS = tuple("ABCD")


def letter(response, options=None, letters=LETTERS):
    return gpqa.read_letter(response, letters, options).letter


@pytest.mark.parametrize("response, expected", [
    ("The mean comes to 41.2. None of the options equals this, but option B is the closest.", "B"),
    ("The interval ends at 19.6. No option matches it, but option C) 20 is the closest.", "C"),
    ("Option D is closest.", "D"),
    ("A is closest to the origin, so C is right.", "C"),  # "closest to" describes a point named A
])
def test_the_closest_option(response, expected):
    assert letter(response) == expected


@pytest.mark.parametrize("response, expected", [
    ("Both (A) and (C) hold. Since the question does not allow two answers, we will pick the more direct one, which is (A).",
     "A"),
    ("Because B is not supported by the data, the answer is (D).", "D"),
    ("Since the sample does not fit, we choose (D).", "D"),
    ("If the sample does not fit, we choose (D).", None),  # a condition, not a reason
    ("We do not choose (D).", None),
])
def test_a_reason_clause_does_not_negate_the_choice(response, expected):
    assert letter(response) == expected


def test_a_letter_after_its_own_option_words_is_not_a_label_for_the_next_sentence():
    options = ["Chest radiograph", "Blood culture", "Sputum stain", "Bronchoscopy"]
    response = ("The best way to confirm it is by bronchoscopy (D). Chest radiograph (A) only shows the shadow, and a "
                "sputum stain (C) is often negative. A blood culture (B) does not help here.")
    assert letter(response, options) == "D"


@pytest.mark.parametrize("response", [
    "The angle works out as computed.\n\nThe measure of the arc is \\( 40^\\circ \\).",
    "The angle works out as computed.\n\nThe measure of the arc is 40°.",
])
def test_a_degree_sign_is_the_same_value(response):
    assert letter(response, ["35", "40", "45", "55"]) == "B"


def test_a_unit_every_option_shares_tells_none_apart():
    options = ["$1 \\mathrm{~m}$", "$2 \\mathrm{~m}$", "$3 \\mathrm{~m}$", "$4 \\mathrm{~m}$"]
    assert letter("So the width is $x = 3$.\n\nTherefore, the width is $\\boxed{3}$ meters.", options) == "C"
    assert letter("Therefore, the width is $\\boxed{3}$.", ["3 apples", "4 pears", "5 plums", "6 figs"]) is None


OPTIONS = ["Measles", "Malaria", "Tuberculosis", "Cholera"]


@pytest.mark.parametrize("response, expected", [
    # a negated premise, then ", so" and a conclusion that commits
    ("Measles is common, but measles is not the deadliest disease among the options, so the deadliest disease among "
     "the options is tuberculosis.", "C"),
    # ", so" followed by no choice leaves the negation standing
    ("The answer is not in the options, so there might be a mistake in the question.", None),
])
def test_a_conclusion_after_a_negated_premise(response, expected):
    assert letter(response, OPTIONS) == expected


def test_another_option_whole_is_not_the_start_of_its_own():
    options = ["['a', 'a', 'a', 'a', 'a']", "['a', 'a', 'a', 'a', 'a', 'a']", "['a']", "['a', 'a', 'a', 'a']"]
    reading = gpqa.read_letter("**Answer: B. ['a', 'a', 'a', 'a']**", LETTERS, options)
    assert reading.letter is None and reading.ambiguous == ("B", "D")  # the words are option D whole
    assert letter("**Answer: B. ['a', 'a', 'a', 'a', 'a', 'a']**", options) == "B"
    assert letter("**Answer: A. ['a', 'a', 'a', 'a', 'a'**", options) == "A"  # cut short: the start of its own
