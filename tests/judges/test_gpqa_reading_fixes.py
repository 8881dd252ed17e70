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
    # a negated or evaluative walk-through: its letters are not choices
    "negated-walkthrough": ("B is incorrect, C is incorrect, A is incorrect, D. a/b m is the correct answer.", "D"),
    "walkthrough-after-answer": ("Answer: B\n\nOption A is correct only in water. Option C is correct because it "
                                 "is stable in gases. D is incorrect.", "B"),
    "verdict-with-reason-alone": ("Option C is correct because the ring opens.", "C"),
    # "which statement is false": "Option D is correct because" is weighed against the final statement
    "false-statement-asked": ("Option D is correct because the ring opens.\nOption A is incorrect: no ring forms."
                              "\n\nThe false statement is A.", "A"),
    "incorrect-statement-paren": ("X holds (option A). So (D) is correct. The incorrect statement is (A).", "A"),
    "odd-one-out": ("We refer to the literature. The odd one out is (C).", "C"),
    # the answer in the response's closing sentence, its letter in parentheses
    "closing-except": ("Auditors may provide all of the following services without approval, except (B).", "B"),
    "closing-quote-before": ('He said "if banks are allowed, so is all else." He is best described as (B).', "B"),
    "closing-two-letters": ("The parents were most likely (A) and (B).", None),
    # a negation before "but" does not hold after it
    "closest-after-but": ("The answer is not among the choices, but the closest is (B).", "B"),
    "statement-is-correct": ("We get 444 m. The statement (B) is correct.", "B"),
    "this-is-option": ("Cells need carbon, nitrogen and water. This is option C.", "C"),
    # several questions answered, or no option taken after all
    "sub-questions": ("(a) x = 2. The answer is (A).\n(b) y = 3. The answer is (B).", None),
    # answers to several whole questions, the asked one last (few-shot examples answered again): the last
    "block-of-answers": ("The answer is (A)\nThe answer is (C)\nThe answer is (B)\nThe answer is (D)", "D"),
    "block-ends-on-first": ("The answer is (A)\nThe answer is (C)\nThe answer is (B)\nThe answer is (A)", "A"),
    "none-after-letter": ("The closest answer is (B). Rechecking gives 12.2. None of the options match this value.",
                          None),
    "listed-together": ("So options (A) and (C) fail. The correct options are (B), (D).", None),
    "summary-of-answers": ("So the answer is (C).\n\nNow, combining all the answers:\nThe answer is (A).", "C"),
    # option text compared as whole values, LaTeX and Unicode normalised on both sides
    "short-option-is-a-whole-value": ("Answer: 1", None),
    "unicode-quotes-latex-option": ("C. ħ/√2", "C"),
    # a conclusion in the model's own words, no answer word, naming exactly one option
    "own-words-one-option": ("Everything considered, the spread comes out as ħ/√2.", "C"),
    "own-words-two-options": ("It lies somewhere between ħ/√2 and a/b m.", None),
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


# Short plain-word replies (shapes paraphrased from MathVista outputs in tests/judges/real): read only when
# nothing else names an option, and only when exactly one option is named.
YES_NO = ["Yes", "No"]
ANGLES = ["10°", "20°", "40°", "80°"]
ANIMALS = ["plant", "human", "lizard", "snake"]
CLOCK = ["half", "quarter", "o'clock", "quarter to", "quarter past"]
PLAIN_CASES = {
    "yes-no-opening": ("No, the lamp is not switched on.", YES_NO, "B"),
    "yes-no-opening-full-stop": ("Yes. Both groups hold the same number of cubes.", YES_NO, "A"),
    "yes-no-needs-yes-no-options": ("No, the angle is not 20°.", ANGLES, None),
    "yes-no-not-in-long-derivations": ("Yes, " + "we add the terms one by one. " * 20 + "The sum is 12.", YES_NO, None),
    "closing-predicate-value": ("Reading the figure, ∠EOD is equal to 20°.", ANGLES, "B"),
    "closing-predicate-article": ("The label that is larger is the snake.", ANIMALS, "D"),
    "closing-predicate-letter": ("The shaded area in the figure is C.", ANGLES, "C"),
    "closing-predicate-negated": ("The angle is not 20°.", ANGLES, None),
    "closing-predicate-not-a-whole-option": ("The angle is 20° or 40°.", ANGLES, None),
    "label-with-own-text": ("The animal most likely to decline if the ants vanish is (D) snake. Snakes eat ants, "
                            "so they lose food.", ANIMALS, "D"),
    "label-with-other-text": ("The animal most likely to decline is (C) snake. Snakes eat ants.", ANIMALS, None),
    "labels-listed-together": ("The two animals are: (C) lizard, and (D) snake.\n", ANIMALS, None),
    "option-list-echoed": ("Choices:\n(A) plant\n(B) human\n(C) lizard\n(D) snake", ANIMALS, None),
    "closing-bracket": ("The minute hand points at 3. So the time is **quarter past six**. (E)\n\nAnything else?",
                        CLOCK, "E"),
    "select-quoted-letter": ('The chart gives no values, so I will select "B" for no.', YES_NO, "B"),
    "is-letter": ("The shape that comes next in the rotation is letter D.", ["A", "B", "C", "D", "E"], "D"),
    "zh-option-correct": ("因此，∠AOE = 125°，选项(D)正确。", ANGLES, "D"),
    "zh-option-not-correct": ("因此，选项(D)不正确。", ANGLES, None),
    "zh-option-closing-line": ("所以∠BCH的大小为60°。\n\n选项A。", ANGLES, "A"),
    "zh-option-list": ("选项A：10°\n选项B：20°", ANGLES, None),
}


@pytest.mark.parametrize("name", PLAIN_CASES)
def test_plain_word_reply(name):
    response, options, expected = PLAIN_CASES[name]
    letters = tuple("ABCDE"[:len(options)])
    reading = gpqa.read_letter(response, letters, options)
    assert reading.letter == expected, (name, reading)


def test_quoted_option_text_and_a_unit_word_after_a_number_option():
    assert gpqa.read_letter('The correct answer is "No."', ("A", "B"), YES_NO).letter == "B"
    assert gpqa.read_letter("The measure of angle A is 20 degrees.", tuple("ABCD"), ["10", "20", "40", "80"]).letter == "B"
    assert gpqa.read_letter("The measure of angle A is 20 degrees or 40.", tuple("ABCD"), ["10", "20", "40", "80"]).letter is None


def test_a_closing_predicate_after_other_option_values_is_no_answer():
    reply = "The angle ABC is 60°. The angle ABD is 45°. The angle DEH is 25°."
    assert gpqa.read_letter(reply, tuple("ABCD"), ["60°", "45°", "30°", "25°"]).letter is None


@pytest.mark.parametrize("response, expected", [
    ("Given that ∠DAB = 35°, we can deduce that ∠MPB = 20°.", "B"),
    ("Given that ∠DAB = 40°, we can deduce that ∠MPB = 20°.", None),  # 40° is option C
    ("The given angle ACG is an 80° angle, which means that ∠BCH is also 10°.", None),  # another option's value
    ("The given angle ACG is a right angle, which means that ∠BCH is also 10°.", "A"),
    ("因此，tan∠BAC的值为 B.", "B"),
    ("The correct option letter for this question is B, which means the angle doubles.", "B"),
])
def test_more_closing_shapes(response, expected):
    assert gpqa.read_letter(response, tuple("ABCD"), ANGLES).letter == expected


VALUES = ["12", " $144$", "5.4 $\\mathrm{cm^2}$", "4,400°F"]


@pytest.mark.parametrize("response, expected", [
    # a boxed value in display math under a "Final Answer" heading: the heading leads it in across the opener
    ("Rounding up gives n = 144.\n\n### Final Answer:\n\\(\\boxed{144}\\)", "B"),
    ("The error is 5.4 cm².\n\n**Final Answer:**\n\\[\n\\boxed{5.4 \\, \\text{cm}^2}\n\\]", "C"),
    ("We pick the closest.\n\n**Answer:**\n$$\\boxed{4,400°F}$$", "D"),
    # no lead-in before the math, or a value that is no option: still no answer
    ("Then n is found.\n\\[\n\\boxed{144}\n\\]", None),
    ("**Final Answer:**\n\\[\n\\boxed{150}\n\\]", None),
    # the lead-in is looked for only next to the opener: an answer word further back does not lead it in
    ("The answer is not clear.\nWe compute n = 144 over several lines of working here.\n\\[\n\\boxed{144}\n\\]", None),
])
def test_boxed_value_under_a_final_answer_heading(response, expected):
    assert gpqa.read_letter(response, tuple("ABCD"), VALUES).letter == expected


@pytest.mark.parametrize("response, expected", [
    # "选" opening the last clause of a sentence that a chooser word ("所以", "因此") opens is the model's choice
    ("由于AB=4，所以∠C=60°，选(B)。", "B"),
    ("因此，∠A的度数为40°，选项为(D)。", "D"),
    ("所以，BE的长是2，选项为 (A) 2。", "A"),
    # a "选" clause in a sentence no chooser opens, or with no comma before it, is still not a choice
    ("题目要求我们比较两个角，选项(B)和(C)都需要计算。", None),
    ("所以我们需要比较选项B和选项C的大小。", None),
])
def test_chinese_choice_clause_after_a_chooser(response, expected):
    assert gpqa.read_letter(response, tuple("ABCD"), ["2", "60°", "25°", "40°"]).letter == expected


def test_invisible_spaces_are_read_as_spaces():
    # zero width spaces (and a byte order mark) before a reply that is only a label and its option text
    assert gpqa.read_letter("\u200b\u200b(D) 122", tuple("ABCD"), ["97", "102", "107", "122"]).letter == "D"
    assert gpqa.read_letter("\ufeffC", tuple("ABCD"), ["1", "2", "4", "8"]).letter == "C"
    assert gpqa.read_letter("Answer:\u200b\u200bB", tuple("ABCD")).letter == "B"


@pytest.mark.parametrize("response, expected", [
    ("Therefore, ∠AOE = **(B)** 110°.\n\nI hope this helps!", "B"),
    ("Therefore, ∠AOE = __(B)__ 110°.", "B"),
    ("Therefore, ∠AOE = **(B)** 135°.", None),  # the text of another option: no pair of a label and its text
    ("It is not **(B)** 110°.", None),
])
def test_bold_label_with_its_own_text(response, expected):
    assert gpqa.read_letter(response, tuple("ABCD"), ["35°", "110°", "135°", "145°"]).letter == expected
