"""Base models continuing a few-shot prompt past their answer (TheoremQA's 5-shot runs of InternLM2 and Mistral,
tests/judges/real): a problem of their own after the answer, two bracketed letters given together, and units written
glued to the number. Responses written here for the purpose, not copied."""
from __future__ import annotations

import pytest

from judges.rules.aime import read_aime
from judges.rules.gpqa import read_letter
from judges.rules.invented_problem import before_invented_problem

SOLVED = ("The number of handshakes among 10 people is 10 choose 2 = 45.\nThe answer is 45\n\n")
INVENTED = ("Problem:\nHow many diagonals does a convex hexagon have?\nSolution\nEach vertex joins 3 others by a "
            "diagonal, so 6 * 3 / 2 = 9.\nThe answer is 9\n\n")


def test_a_problem_made_up_after_the_answer_is_not_read():
    assert read_aime(SOLVED + INVENTED + INVENTED).value == 45


def test_a_made_up_problem_whose_own_answer_is_no_integer_leaves_the_asked_answer():
    tail = "Problem:\nWhat is the inverse of the matrix [[1, 2], [3, 4]]?\nSolution\nThe answer is [[-2, 1], [1.5, -0.5]]"
    assert read_aime(SOLVED + tail).value == 45


@pytest.mark.parametrize("response", [
    # the problem asked, echoed at the start
    "Problem:\nHow many handshakes among 10 people?\nSolution\nEach pair shakes once: 45.\nThe answer is 45",
    # a "Problem:" heading with no answer just before it: part of the working
    "We split the count in two.\n\nProblem: the pairs inside each group overlap.\nCounting them once gives 45.\n"
    "The answer is 45",
])
def test_a_heading_that_follows_no_answer_is_kept(response):
    assert read_aime(response).value == 45


def test_only_the_first_headings_are_looked_at():
    text = "\nProblem:\nno answer before me." * 100 + "\nThe answer is 3\n\nProblem:\nThe answer is 4"
    assert before_invented_problem(text) == text  # past the 64th heading nothing is cut


def test_a_letter_answer_before_a_made_up_problem():
    response = ("The estimate is unbiased, so the variance is theta^2/n.\nThe answer is (b)\n\nProblem:\nWhich of the "
                "following is a sufficient statistic? (a) the mean (b) the median (c) the maximum (d) the range\n"
                "Solution\nThe maximum is sufficient for a uniform family.\nThe answer is (c)")
    assert read_letter(response, tuple("ABCD")).letter == "B"


@pytest.mark.parametrize("response", [
    "Both codes fail the prefix condition.\nThe answer is (a) and (b).",
    "Either image could have the most AC coefficients.\nThe answer is (c) or (d).",
])
def test_two_bracketed_letters_given_together_are_no_answer(response):
    assert read_letter(response, tuple("ABCD")).letter is None


@pytest.mark.parametrize("response, value", [
    ("Each round trip takes 22 ms, four of them and the transfer: 97ms.\nThe answer is 97ms", 97),
    ("The total time is 700 ms.\nThe answer is 700ms.", 700),
    ("The link carries 500kbps after the upgrade.\nThe answer is 500kbps", 500),
])
def test_a_unit_glued_to_the_number(response, value):
    assert read_aime(response).value == value


# A loop that keeps rejecting something, cut off by the token limit (Llama-3.1 on MMLU-Pro, tests/judges/real): the
# letter inside it is no answer, whether the last turn lost its verdict or is the next turn's first letter.
@pytest.mark.parametrize("response", [
    "Let's see.\n\n" + "the nearest option is \"G. Insects\" is not correct, but " * 12 + "the nearest option is \"G.",
    "Let's see.\n\n" + "   B2's part: $4,000 + $1,500 is not correct.\n\n   Work out each part again.\n\n" * 10 + "   B",
])
def test_a_letter_inside_a_loop_that_rejects_is_no_answer(response):
    assert read_letter(response, tuple("ABCDEFGH")).letter is None


def test_a_loop_that_repeats_its_answer_still_answers():
    assert read_letter("Done.\n\n" + "The answer is (C).\n" * 30 + "The answer is (", tuple("ABCD")).letter == "C"


# Tool-integrated answers (ToRA on GSM8K, tests/judges/real): the code's output, then one closing sentence.
OUTPUT = "```python\nprint(30 // 5 - 2)\n```\n```output\n4\n```\n"


@pytest.mark.parametrize("response, value", [
    (OUTPUT + "Four crates were unloaded on the second day.", 4),
    (OUTPUT + "4 crates were unloaded on the second day.", 4),
    (OUTPUT + "Twenty guests did not get a second plate.", 20),
    (OUTPUT + "Two people accept the offer.", 2),
])
def test_a_closing_sentence_that_opens_with_its_count(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("response", [
    OUTPUT + "Four crates were unloaded on the second day and 6 on the third.",  # two numbers
    OUTPUT + "Four crates were unloaded if the truck came back.",  # hedged
    OUTPUT + "3 more crates are needed.",  # "more" changes the value
    OUTPUT + "Four crates were unloaded on the",  # cut off
])
def test_an_opening_count_that_does_not_state_one_value(response):
    assert read_aime(response).value is None


def test_two_boxed_values_joined_in_one_sentence_are_no_answer():
    assert read_aime("It takes $\\boxed{5}$ hours and $\\boxed{20}$ minutes.").value is None
    assert read_aime("So x = $\\boxed{4}$ and y = $\\boxed{4}$.").value == 4
