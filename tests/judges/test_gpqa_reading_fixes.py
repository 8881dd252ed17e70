"""Issue 20's reading cases, paraphrased from real responses: each phrasing and the letter (or none) it gives."""
from __future__ import annotations

import pytest

from judges.rules import gpqa

OPTIONS = ["A = cyclohexanecarbaldehyde, B = TsOH", "1/6", "\\hbar/\\sqrt{2}", "\\frac{a}{b} m"]

CASES = {
    # labels inside option texts are not answer letters
    "labels-inside-option": ("**A. A = cyclohexanecarbaldehyde, B = TsOH**\n\nThe aldehyde (A) condenses first.", "A"),
    # markup between the anchor word and the letter
    "option-bold-letter": ("Thus the correct answer is option **B**.", "B"),
    "closest-to-bold-label": ("The energy is closest to option **A. 20.132 GeV**.", "A"),
    "bold-label-after-is": ("So the number of peaks is **B. 40**.", "B"),
    # the answer first, then a walk-through of the other options
    "answer-first-then-walkthrough": ("The answer is C.\n\nA is incorrect because x.\nB is incorrect because y.\n"
                                      "D is wrong since z.", "C"),
    "bullets-are-not-lead-ins": ("**Option A** is incorrect because it is wrong.\n**Option B** is incorrect because "
                                 "it is bad.\n\nAnswer: C", "C"),
    # explicit non-answers
    "none-of-the-options": ("After checking each, none of the given options is correct.", None),
    "not-among-the-options": ("The computed value 12.5 is not among the options provided.", None),
    "either-or": ("The answer is either B or D.", None),
    "not-closest": ("This is not closest to option B.", None),
    # option text compared as whole values, LaTeX and Unicode normalised on both sides
    "short-option-is-a-whole-value": ("Answer: 1", None),
    "unicode-quotes-latex-option": ("C. ħ/√2", "C"),
}


@pytest.mark.parametrize("name", CASES)
def test_reading_case(name):
    response, expected = CASES[name]
    reading = gpqa.read_letter(response, options=OPTIONS)
    assert reading.ambiguous is None
    assert reading.letter == expected, (name, reading)


def test_latex_and_unicode_are_normalised_on_both_sides():
    # D quoted with the text of option C, written in Unicode where the option is LaTeX: not silently D.
    reading = gpqa.read_letter("D. ħ/√2", options=OPTIONS)
    assert (reading.letter, reading.ambiguous) == (None, ("D", "C"))
    assert gpqa.read_letter("The final answer is a/b m.", options=OPTIONS).letter == "D"
