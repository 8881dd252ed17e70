"""Models trained R1-style answer inside <answer></answer> after their thinking, and some skip the think tags
(SophiaVL-R1 on MathVista, tests/judges/real); a short reply may give an option's words alone on its first line
(InternVL3). Responses written here for the purpose, not copied."""
from __future__ import annotations

import pytest

from judges.rules.aime import read_aime
from judges.rules.extract import committed_text
from judges.rules.gpqa import read_letter

COLOURS = ["Yes", "No"]


@pytest.mark.parametrize("response, value", [
    ("<think>\nThe bars read 4, 9 and 2; the largest is 9.\n</think>\n<answer>9</answer>", 9),
    ("<think>Three red cubes, two removed.</think>\n<answer>\nThere is 1 red cube left.\n</answer>", 1),
    # no think tags at all: the block is still the answer, not the 12 in the working
    ("Let me look. The ruler shows 12 marks but the nail spans 3 of them.\n<answer>3</answer>", 3),
    # the last block wins over an earlier draft
    ("<answer>5</answer>\nWait, I miscounted the hidden cube.\n<answer>6</answer>", 6),
])
def test_an_integer_inside_the_answer_block(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("response, letter", [
    ("<think>The curve repeats every 2 units.</think>\n<answer>Yes</answer>", "A"),
    ("Let me think about this. Nothing repeats.\n<answer>No</answer>", "B"),
    ("<think>It repeats.</think><answer> Yes, the function is periodic. </answer>", "A"),
])
def test_a_letter_or_an_options_words_inside_the_answer_block(response, letter):
    assert read_letter(response, ("A", "B"), COLOURS).letter == letter


def test_letter_only_options_inside_the_answer_block():
    assert read_letter("<think>Region B is solid.</think>\n<answer>B</answer>", tuple("ABCD"),
                       ["(A)", "(B)", "(C)", "(D)"]).letter == "B"


def test_an_unclosed_answer_block_is_not_cut_to():
    text, _ = committed_text("<think>x</think><answer>The answer is 7 because")
    assert text == "<answer>The answer is 7 because"


def test_a_block_inside_the_thinking_does_not_count():
    assert read_aime("<think>Maybe <answer>4</answer>? No.</think>\nThe answer is 5.").value == 5


SCHEMES = ["Hard", "Soft", "Linear decay", "Cosine decay"]


def test_an_options_words_alone_on_the_first_line():
    response = "Soft\n\nThe soft curve stays above every other one across the training steps."
    assert read_letter(response, tuple("ABCD"), SCHEMES).letter == "B"


@pytest.mark.parametrize("response", [
    "Soft\n\nThe soft curve stays above, though cosine decay catches up at the end.",  # another option named
    "Soft or hard\n\nBoth curves end close together.",  # the first line is not an option's whole text
])
def test_an_opening_line_that_is_not_one_options_words_alone(response):
    assert read_letter(response, tuple("ABCD"), SCHEMES).letter is None
