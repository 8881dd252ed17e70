"""An option given as its value in a \\boxed{} (issue 20, MATH-V outputs in tests/judges/real): prompts that ask
for the answer "in \\boxed{}" get a closing box with no answer word around it, and a box whose whole body is
one option's text. The phrasings are ours, shaped like the real ones."""
from __future__ import annotations

import pytest

from judges.rules.gpqa import read_letter

LETTERS = ("A", "B", "C", "D", "E")
LENGTHS = ["$\\frac{3}{2}$", "$2\\sqrt{3}$", "$4$", "$5$", "$3\\sqrt{2}$"]
CODES = ["KP", "PP", "KT", "TK", "PT"]


@pytest.mark.parametrize("response,options,want", [
    # The closing box is the answer even though its sentence has no answer word: the sentence runs into it.
    ("Since the base cube has an edge of 4, the part of the segment that runs through the middle cube is "
     "exactly as long as the side of the base cube, which is $\\boxed{4}$.", LENGTHS, "C"),
    ("Adding the two shorter pieces gives the diagonal:\n\\[\n\\boxed{2\\sqrt{3}}\n\\]", LENGTHS, "B"),
    # A box's whole body is compared first, so the explanation after it does not hide the option it names.
    ("Trying the digits in turn, the answer is \\boxed{KT}. With K = 4 and T = 7 both sums check out.", CODES, "C"),
], ids=["closing-box-no-answer-word", "closing-display-box", "box-body-then-explanation"])
def test_boxed_option_value_is_read(response, options, want):
    assert read_letter(response, LETTERS, options).letter == want


@pytest.mark.parametrize("response,options", [
    # A closing box whose value is no option, or that the sentence denies, names nothing.
    ("So the segment is $\\boxed{7}$.", LENGTHS),
    ("Whatever the figure shows, the length is not $\\boxed{4}$.", LENGTHS),
    # A closing box after a sentence that already ended does not give that sentence's value.
    ("The segment has now been worked out.\n\\[\n\\boxed{4}\n\\]", LENGTHS),
    # A box is compared as a whole value: 15√3 is not the option "15".
    ("Five of these triangles cover a region whose area is $\\boxed{15\\sqrt{3}}$.",
     ["$12$", "$15$", "$15\\sqrt{2}$", "$18$", "$20$"]),
    # A box in the middle of the reasoning, with no answer word, is a step, not the answer.
    ("The first piece is $\\boxed{4}$ long, and the second one still has to be measured against the grid "
     "before anything can be said.", LENGTHS),
    # Two letters in one box are two answers.
    ("Squares C and D hold the same number of shaded triangles.\n\n\\boxed{C, D}", CODES),
], ids=["closing-box-not-an-option", "closing-box-negated", "closing-box-after-a-full-stop",
        "box-is-a-whole-value", "box-mid-reasoning", "two-letters-in-a-box"])
def test_boxed_value_that_is_not_an_answer(response, options):
    assert read_letter(response, LETTERS, options).letter is None
