"""How models commit to an answer, family by family (our own wording, not corpus text): what each reader reads.

Issue 20's held-out split misses phrasings that the tuning split lacks; these cases cover the families of
closing statements that models write, so a rule fitted to one string does not pass for the family.
"""
from __future__ import annotations

import pytest

from judges.rules import aime, gpqa

OPTIONS = ["42.5 J", "7 kg", "a ring of six carbons", "no reaction occurs"]
WORK = "We compare the energies of the two states and keep the larger term.\n\n"

GPQA_CASES = {
    # reasoning-model endings
    "think-then-letter": ("<think>maybe B, or A</think>\n\nC", "C"),
    "final-answer-heading-boxed": (WORK + "**Final Answer**\n\n\\boxed{C}", "C"),
    "boxed-text-letter": (WORK + "The result: \\boxed{\\text{C}}", "C"),
    "boxed-parenthesised": (WORK + "\\boxed{(C)}", "C"),
    "answer-dollar-boxed": (WORK + "Answer: $\\boxed{C}$", "C"),
    "boxed-letter-text-after": (WORK + "\\boxed{C}\n\nThis follows from the ring strain.", "C"),
    # plain statements of a choice
    "must-be": (WORK + "Given all this, the answer must be C.", "C"),
    "go-with": (WORK + "I'll go with C.", "C"),
    "going-with-option": (WORK + "I am going with option C.", "C"),
    "think-its": (WORK + "So I think it's C.", "C"),
    "is-the-one": (WORK + "C is the one.", "C"),
    "therefore-paren-text": (WORK + "Therefore, (C) a ring of six carbons", "C"),
    "correct-choice-colon": (WORK + "correct choice: C", "C"),
    "bold-alone-last-line": (WORK + "**C**", "C"),
    "option-alone": (WORK + "Option C.", "C"),
    "correct-option-next-line": (WORK + "The correct option is: \n\nC) a ring of six carbons", "C"),
    "zh-answer-is": (WORK + "答案是C", "C"),
    "zh-therefore-choose": (WORK + "故选C", "C"),
    "paren-alone": (WORK + "(C)", "C"),
    "bold-letter-period": (WORK + "The answer is **C.**", "C"),
    "inspect-format": (WORK + "ANSWER: C", "C"),
    "answer-then-explanation": ("Answer: C\n\nThe ring forms because the two ends meet, and A and B are both "
                                "ruled out by the energy.", "C"),
    "so-that-is-the-answer": (WORK + "The only value that fits is (C), so that is the answer.", "C"),
    "which-is-the-answer": (WORK + "We keep C, which is the correct answer.", "C"),
    "thats-my-answer": (WORK + "(C). That is my final answer.", "C"),
    # markdown near the end
    "table-then-answer": (WORK + "| option | value |\n|---|---|\n| A | 12 |\n| C | 42 |\n\n### Answer\n**C**", "C"),
    "answer-then-disclaimer": (WORK + "The answer is (C).\n\n*Note: this assumes ideal conditions.*", "C"),
    "answer-then-summary-list": (WORK + "**Answer: C**\n\n- A: too small\n- B: wrong sign\n- D: no ring", "C"),
    # the option's own text, when it matches exactly one option
    "option-text-last-line": (WORK + "So the product is a ring of six carbons.", "C"),
    "option-text-hyphen": (WORK + "no-reaction occurs.", "D"),
    # non-answers stay non-answers
    "two-letters": (WORK + "It is either B or C.", None),
    "supposition": (WORK + "Let's say it is C; then the energy doubles, which the data rule out.", None),
    "doubt": (WORK + "I don't think it's C.", None),
    "none-fit": (WORK + "None of the options fits the value we found.", None),
    "list-of-options-cut-off": ("Let us read each option.\n(A) means the first state.\n(B) means the second state."
                                "\n(C)", None),
    "option-in-arithmetic-cut-off": (WORK + "The work is 42.5 J / 3 s = 14 W so the power per", None),
    "operand-is-no-statement": (WORK + "So the answer is 42.5 J / 5 = 8.5 J per step.", None),
    "letter-then-long-cut-off-reasoning": (
        "(A) We first find the moles of the salt. The molar mass is 400 g/mol, so ten grams give 0.025 mol, and "
        "three moles of the other reagent are needed for each mole of it, so from the ratio of the two amounts we "
        "need 3", None),
    "or-between-parenthesised": (WORK + "Spending more or taxing less both work. The answer is (A) or (C).", None),
    "two-letters-after-a-line": (WORK + "C. a ring of six carbons - the likely product.\n\nSo the answer is B and C.",
                                 None),
    "paren-after-anchor-same-sentence": (WORK + "So the correct answer is (C) with support from (D).", "C"),
    "summary-of-answers-above-zh": ("The ring closes. The answer is (C).\n\nNow, let's总结以上答案:\n\nThe answer is "
                                    "(A).\nThe answer is (D).", "C"),
    "copula-then-own-label": (WORK + "The product that forms was C. a ring of six carbons, as the ends meet.", "C"),
    "copula-then-other-label": (WORK + "The product that forms was C. no reaction occurs, as the ends meet.", None),
    "copula-then-two-labels": (WORK + "The two products are: (C) a ring of six carbons and (D) no reaction occurs.",
                               None),
    "answer-in-display-math": (WORK + "The answer is:\n\\[\n\\text{C. a ring of six carbons}\n\\]", "C"),
    "walk-through-loop-cut-off": ("So (C) is correct. " + "The film does not form here, so (D) is incorrect. " * 8
                                  + "The film does not form here, so (", None),
    "answer-loop-cut-off": (WORK + "The answer is (C). " * 8 + "The answer is (", "C"),
}


# Short plain-word replies of vision-language models (our wording): the option is the closing statement's predicate.
FOOD_WEB = ["decrease", "remain the same", "increase", "none of the above"]
ANIMALS = ["Rabbit", "Deer", "Frogs", "Wolf"]
PLAIN_CASES = {
    "premise-then-will": ("If the grass dies out, the number of rabbits will decrease.", FOOD_WEB, "A"),
    "statement-then-reason-sentence": ("The animal that would go hungry first is the wolf. This is because rabbits "
                                       "and deer are its only food.", ANIMALS, "D"),
    "reason-clause-names-others": ("The animal that would lack food first is Rabbit, as it is the prey of both Deer "
                                   "and Wolf.", ANIMALS, "A"),
    "leading-since-is-the-statement": ("Since the grass grows back, the animal that gains most is the wolf.",
                                       ANIMALS, "D"),
    "would-not-change": ("If the frogs leave, the number of rabbits would not change.", FOOD_WEB, None),
    "two-statements": ("The deer would starve. The animal that gains is the wolf, and the frogs would increase.",
                       ANIMALS, None),
}


@pytest.mark.parametrize("case", PLAIN_CASES)
def test_gpqa_reads_a_closing_statement_in_plain_words(case):
    response, options, letter = PLAIN_CASES[case]
    letters = tuple("ABCD")
    reading = gpqa.read_letter(response, letters, options)
    assert (None if reading.ambiguous else reading.letter) == letter, (case, reading)


@pytest.mark.parametrize("case", GPQA_CASES)
def test_gpqa_reads_each_family_of_commitment(case):
    response, letter = GPQA_CASES[case]
    reading = gpqa.read_letter(response, gpqa.DEFAULT_LETTERS, OPTIONS)
    got = None if reading.ambiguous else reading.letter
    assert got == letter, (case, reading)


AIME_CASES = {
    "boxed-zero-padded": (WORK + "\\boxed{073}", 73),
    "boxed-then-text": (WORK + "\\boxed{73}\n\nThis matches the count of residues found above.", 73),
    "minerva-format": (WORK + "The final answer is $\\boxed{73}$. I hope it is correct.", 73),
    "bold-alone-at-end": (WORK + "**73**", 73),
    "answer-is-period": (WORK + "So the answer is 73.", 73),
    "not-the-answer": (WORK + "We found 73, but 73 is not the answer.", None),
    "thousands-separator": (WORK + "The answer is 1,000.", 1000),
    "degrees": (WORK + "The answer is $73^\\circ$.", 73),
    "unit-after": (WORK + "The answer is 73 meters.", 73),
    "last-equation": ("We add the counts: 40 + 33 = 73", 73),
    "last-box-wins": (WORK + "First $\\boxed{12}$ for the small case. In total, \\boxed{73}", 73),
    "restated-sub-result-after": (WORK + "The first step gives $\\boxed{12}$.\n\nFinal answer: \\boxed{73}\n\n"
                                         "Recall that the first step gave \\boxed{12}.", 73),
    "new-value-after-final": (WORK + "Final answer: \\boxed{73}\n\nChecking again, the count is \\boxed{75}", 75),
    "answer-is-description-which-is": (WORK + "Thus, the answer is the number of pairs we counted, which is 73.", 73),
    "answer-is-count-of-things": (WORK + "So, the answer to the question is 2 bars have values above 4.", 2),
    "one-sentence-one-number": ("The small hand of the clock points to the number 3.", 3),
    "one-sentence-about": ("A bus like this goes about 3 miles per gallon.", 3),
    "main-clause-then-with": ("The gap between the two ages is 23 years, with one aged 23 and the other 46.", 23),
    "answer-first-bold": ("The year with the lowest value was **2013**. The value that year was $44,068.\n\n"
                          "The chart shows values from 2000 to 2019.", 2013),
    "closing-then-because": ("After removing the red cubes, there are 3 objects left. This is because there were "
                             "5 objects and 2 red cubes.", 3),
    "signed-value": ("She measures a speed of $v=-52 \\mathrm{~km/h}$ relative to the car.", -52),
    "leading-since-clause": ("Since the two sides give BE + CF = 8, the length of EF is 8.", 8),
    # no answer
    "one-sentence-two-numbers": ("There are 3 cats and 4 dogs.", None),
    "one-sentence-cut-off": ("Working: 12 so far, then", None),
    "blank-left": ("The model has ___ dots split into 2 equal groups.", None),
    "number-in-subject": ("The limit as x approaches -1 is undefined.", None),
    "number-describes": ("To count the crates with exactly 56 boxes, we need more information.", None),
    "contrast": ("No block has exactly 36 houses, but 3 blocks have 36 on average.", None),
    "while-second-claim": ("The most tattoos on a man is six, while the fewest on a woman is one.", None),
    "reason-computes-other": ("The perimeter is 6 units, because the sides add to 1 + 3 + 2 = 10 cm.", None),
    "one-sentence-question": ("Is the answer 3?", None),
    "one-sentence-hedged": ("It could be 3 if the hand is the short one.", None),
    "cut-off-equation": (WORK + "Then we add the parts, and so the total count of the residues that remain in the "
                                "last set of the sums, after the two checks above, is 40 + 33 = 7", None),
}


@pytest.mark.parametrize("case", AIME_CASES)
def test_aime_reads_each_family_of_commitment(case):
    response, value = AIME_CASES[case]
    assert aime.read_aime(response).value == value, (case, aime.read_aime(response))
