"""Golden GPQA responses, written the way reasoning models answer, with the verdict each must get.

Each case: id, response, target (the gold letter after the sample's shuffle), optional letters
(the sample's choice set, default A-D), and the expected status, extracted letter and correctness.
"""

# A reasoning block that weighs every option, restating the choices and naming letters mid-text.
THINK_OVER_OPTIONS = """<think>
The question: which compound shows two singlets in the 1H NMR at 2.1 and 3.7 ppm in a 1:1 ratio?

Options: (A) methyl acetate, (B) ethyl acetate, (C) acetone, (D) dimethyl ether.

A) methyl acetate: CH3-C(=O)-O-CH3 has two methyl singlets, one near 2.0 (acetyl) and one near 3.7 (methoxy). 3H:3H, so 1:1. That fits.
B) ethyl acetate would show a quartet and a triplet, not two singlets. So not B.
C) acetone has a single singlet at 2.2. Not C.
D) dimethyl ether, one singlet at 3.2. Not D.

Hmm, the answer is A? Let me double check the acetyl methyl shift, about 2.05 ppm. Yes.
So Answer: A. Both A and C have a methyl ketone-like signal but only A has the methoxy group.
</think>

"""

# A long answer without think tags that discusses the options before committing.
LONG_DISCUSSION = """To decide, compare each candidate mechanism with the observed kinetics.

The rate law is first order in substrate and zero order in nucleophile, which points to a unimolecular
rate-determining step. (A) SN2 would be first order in both. (B) SN1 matches the rate law and the
racemisation observed. (C) E2 would again involve the base in the rate law. (D) E1 shares the rate law
with SN1, but the product is a substitution product, not an alkene.

Option (A) is ruled out by the kinetics, (C) likewise, and (D) by the product.
"""

CASES = [
    # --- anchored forms ----------------------------------------------------------------------------
    dict(id="answer-colon", response="Answer: C", target="C", status="graded", extracted="C", correct=True),
    dict(id="answer-paren", response="Answer: (C)", target="C", status="graded", extracted="C", correct=True),
    dict(id="bold-label", response="**Answer:** C", target="C", status="graded", extracted="C", correct=True),
    dict(id="bold-whole", response="**Answer: C**", target="C", status="graded", extracted="C", correct=True),
    dict(id="bold-label-colon-outside", response="**Answer**: C", target="C", status="graded", extracted="C", correct=True),
    dict(id="bold-letter", response="Answer: **B**", target="B", status="graded", extracted="B", correct=True),
    dict(id="letter-close-paren", response="Answer: C)", target="C", status="graded", extracted="C", correct=True),
    dict(id="letter-with-choice-text", response="Answer: A) 1.2 eV", target="A", status="graded", extracted="A", correct=True),
    dict(id="letter-period", response="Answer: B.", target="B", status="graded", extracted="B", correct=True),
    dict(id="square-brackets", response="Answer: [C]", target="C", status="graded", extracted="C", correct=True),
    dict(id="math-dollars", response="Answer: $C$", target="C", status="graded", extracted="C", correct=True),
    dict(id="mathrm-inline", response="Answer: \\(\\mathrm{C}\\)", target="C", status="graded", extracted="C", correct=True),
    dict(id="boxed", response="Therefore the mechanism is SN1.\n\n\\boxed{B}", target="B", status="graded", extracted="B", correct=True),
    dict(id="boxed-text", response="$\\boxed{\\text{C}}$", target="C", status="graded", extracted="C", correct=True),
    dict(id="boxed-textbf-paren", response="The final choice is $\\boxed{\\textbf{(D)}}$.", target="D", status="graded", extracted="D", correct=True),
    dict(id="boxed-lowercase", response="\\boxed{c}", target="C", status="graded", extracted="C", correct=True),
    dict(id="answer-then-boxed", response="Answer: \\boxed{B}", target="B", status="graded", extracted="B", correct=True),
    dict(id="the-answer-is-paren", response="The answer is (C).", target="C", status="graded", extracted="C", correct=True),
    dict(id="the-correct-answer-is", response="After comparing the spectra, the correct answer is C", target="C", status="graded", extracted="C", correct=True),
    dict(id="final-answer-lowercase", response="final answer: c", target="C", status="graded", extracted="C", correct=True),
    dict(id="the-answer-is-lowercase-paren", response="so the answer is (d)", target="D", status="graded", extracted="D", correct=True),
    dict(id="answer-lowercase-bare", response="Answer: b", target="B", status="graded", extracted="B", correct=True),
    dict(id="all-caps-label", response="ANSWER: D", target="D", status="graded", extracted="D", correct=True),
    dict(id="answer-newline-letter", response="Answer:\n\nD", target="D", status="graded", extracted="D", correct=True),
    dict(id="final-answer-heading", response="### Final Answer\n**B**", target="B", status="graded", extracted="B", correct=True),
    dict(id="bold-final-answer-paren", response="**Final Answer: (A)**", target="A", status="graded", extracted="A", correct=True),
    dict(id="my-final-answer-is", response="My final answer is B.", target="B", status="graded", extracted="B", correct=True),
    dict(id="answer-should-be", response="Weighing the isotope effect, the answer should be B", target="B", status="graded", extracted="B", correct=True),
    dict(id="correct-option-is", response="Therefore, the correct option is (A).", target="A", status="graded", extracted="A", correct=True),
    dict(id="option-x-is-correct", response="Option D is correct.", target="D", status="graded", extracted="D", correct=True),
    dict(id="letter-is-the-correct-answer", response="(B) is the correct answer.", target="B", status="graded", extracted="B", correct=True),
    dict(id="answer-with-reason", response="Answer: A, since only methyl acetate has a methoxy singlet.", target="A", status="graded", extracted="A", correct=True),
    dict(id="the-answer-is-then-because", response="The answer is A because the reaction is under kinetic control.", target="A", status="graded", extracted="A", correct=True),
    dict(id="wrong-letter-graded-wrong", response="Answer: D", target="A", status="graded", extracted="D", correct=False),
    # --- full width --------------------------------------------------------------------------------
    dict(id="full-width-letter", response="Answer: Ｃ", target="C", status="graded", extracted="C", correct=True),
    dict(id="full-width-everything", response="Ａｎｓｗｅｒ：Ｂ", target="B", status="graded", extracted="B", correct=True),
    dict(id="full-width-parens", response="Answer：（Ｃ）", target="C", status="graded", extracted="C", correct=True),
    dict(id="full-width-correct-answer", response="The correct answer is Ｄ.", target="D", status="graded", extracted="D", correct=True),
    # --- a response that is just the letter ---------------------------------------------------------
    dict(id="bare-letter", response="C", target="C", status="graded", extracted="C", correct=True),
    dict(id="bare-paren", response="(C)", target="C", status="graded", extracted="C", correct=True),
    dict(id="bare-bold", response="**C**", target="C", status="graded", extracted="C", correct=True),
    dict(id="bare-period-newline", response="C.\n", target="C", status="graded", extracted="C", correct=True),
    dict(id="bare-lowercase", response="c", target="C", status="graded", extracted="C", correct=True),
    dict(id="bare-letter-with-choice", response="B) ethyl acetate", target="B", status="graded", extracted="B", correct=True),
    dict(id="think-then-bare", response=THINK_OVER_OPTIONS + "A", target="A", status="graded", extracted="A", correct=True),
    dict(id="reasoning-then-bold-last-line", response=LONG_DISCUSSION + "\n**B**", target="B", status="graded", extracted="B", correct=True),
    # --- not answers -------------------------------------------------------------------------------
    dict(id="cannot-is-not-c", response="Answer: Cannot be determined from the data given.", target="C", status="no_answer", extracted=None, correct=False),
    dict(id="both-a-and-c", response="Both A and C are consistent with the spectrum.", target="A", status="no_answer", extracted=None, correct=False),
    dict(id="hedged-or", response="Answer: B or C", target="B", status="no_answer", extracted=None, correct=False),
    dict(id="hedged-slash", response="Answer: A/B", target="A", status="no_answer", extracted=None, correct=False),
    dict(id="hedged-comma", response="Answer: C, D", target="C", status="no_answer", extracted=None, correct=False),
    dict(id="article-a-not-a", response="The answer is a mixture of both diastereomers.", target="A", status="no_answer", extracted=None, correct=False),
    dict(id="letter-outside-choices", response="Answer: E", target="D", status="no_answer", extracted=None, correct=False),
    dict(id="unfilled-placeholder", response="The spin-orbit term dominates.\nAnswer: X", target="A", status="no_answer", extracted=None, correct=False),
    dict(id="restated-choices-only", response="The choices are:\nA) 1.2 eV\nB) 2.4 eV\nC) 3.6 eV\nD) 4.8 eV\nI need more information.", target="B", status="no_answer", extracted=None, correct=False),
    dict(id="answer-only-in-think", response=THINK_OVER_OPTIONS.rstrip() + "\nI have now reviewed all four options.", target="A", status="no_answer", extracted=None, correct=False),
    dict(id="think-open-truncated", response=THINK_OVER_OPTIONS.replace("</think>", "Wait, let me reconsider D, since the ether"), target="A", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="retracted-no-replacement", response="Answer: C\n\nWait, that's wrong: the coupling constant rules out C. Let me redo the analysis of the", target="B", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="empty", response="", target="A", status="no_answer", extracted=None, correct=False),
    # --- the last committed answer wins -------------------------------------------------------------
    dict(id="think-answer-differs-from-final", response=THINK_OVER_OPTIONS + "The methoxy singlet decides it.\n\nAnswer: B", target="B", status="graded", extracted="B", correct=True),
    dict(id="think-then-anchored", response=THINK_OVER_OPTIONS + "Methyl acetate has two singlets in a 1:1 ratio.\n\n**Answer: A**", target="A", status="graded", extracted="A", correct=True),
    dict(id="close-tag-only", response="Consider each option... Answer: D maybe.\n</think>\n\nThe answer is (A).", target="A", status="graded", extracted="A", correct=True),
    dict(id="restated-choices-then-answer", response=LONG_DISCUSSION + "\nAnswer: B", target="B", status="graded", extracted="B", correct=True),
    dict(id="answer-then-choices-listed", response="Answer: B\n\nFor reference, the choices were:\nA) SN2\nB) SN1\nC) E2\nD) E1", target="B", status="graded", extracted="B", correct=True),
    dict(id="changed-mind", response="I think the answer is B, but on reflection about the steric hindrance the answer is D.", target="D", status="graded", extracted="D", correct=True),
    dict(id="abandoned-then-corrected", response="Answer: A\n\nWait, that's wrong. The ratio is inverted, so the heavier isotope is slower.\n\nAnswer: B", target="B", status="graded", extracted="B", correct=True),
    dict(id="mid-text-answer-then-final", response="At first glance the answer is B, as the dipole suggests. Including the solvent shell, though:\n\nAnswer: C", target="C", status="graded", extracted="C", correct=True),
    dict(id="quoted-instruction-before", response='The question asks me to end with "Answer: X". Having checked the selection rules:\n\nAnswer: A', target="A", status="graded", extracted="A", correct=True),
    dict(id="quoted-instruction-after", response='Answer: A\n\n(Formatted as "Answer: X" as requested.)', target="A", status="graded", extracted="A", correct=True),
    dict(id="other-options-mentioned-after", response="The answer is C. The other options (A, B and D) are ruled out because they violate parity.", target="C", status="graded", extracted="C", correct=True),
    dict(id="mistake-mentioned-not-retraction", response="Answer: C\n\nNote: a common mistake is to choose B by ignoring the spin state.", target="C", status="graded", extracted="C", correct=True),
    dict(id="double-check-keeps", response="Answer: D.\nWait, let me double-check the units. Yes, D holds.", target="D", status="graded", extracted="D", correct=True),
    dict(id="out-of-set-after-valid", response="Answer: B\n\nActually none of these fit; Answer: E", target="B", status="no_answer", extracted=None, correct=False),
    # --- other choice sets -------------------------------------------------------------------------
    dict(id="five-choices-e-valid", response="Answer: E", target="E", letters="ABCDE", status="graded", extracted="E", correct=True),
    dict(id="five-choices-list-meta", response="The answer is (E).", target="E", letters=["A", "B", "C", "D", "E"], status="graded", extracted="E", correct=True),
    dict(id="three-choices-d-rejected", response="Answer: D", target="C", letters="ABC", status="no_answer", extracted=None, correct=False),
    # --- more phrasings --------------------------------------------------------------------------
    dict(id="answer-colon-correct-option", response="Answer: The correct option is C", target="C", status="graded", extracted="C", correct=True),
    dict(id="answer-option-lowercase-paren", response="Answer: option (b)", target="B", status="graded", extracted="B", correct=True),
    dict(id="final-answer-boxed", response="Final Answer: \\boxed{D}", target="D", status="graded", extracted="D", correct=True),
    dict(id="repeated-answer-lines-last", response="Answer: (A)\nAnswer: (B)", target="B", status="graded", extracted="B", correct=True),
    dict(id="no-space-after-colon", response="Answer:C", target="C", status="graded", extracted="C", correct=True),
    dict(id="answer-then-not-other", response="Thus the correct answer is D, not B.", target="D", status="graded", extracted="D", correct=True),
    dict(id="answer-is-not-letter", response="Thus the correct answer is not D.", target="D", status="no_answer", extracted=None, correct=False),
    dict(id="hedged-list", response="The answer is A, B, or C", target="A", status="no_answer", extracted=None, correct=False),
    dict(id="explanation-mentions-other-letter", response="Answer: A.\n\nExplanation: the reasoning relies on the fact that B violates parity.", target="A", status="graded", extracted="A", correct=True),
    dict(id="letter-is-the-correct-answer-no-paren", response="After all that, B is the correct answer.", target="B", status="graded", extracted="B", correct=True),
    dict(id="chinese-anchor", response="综上所述，答案：C", target="C", status="graded", extracted="C", correct=True),
    dict(id="chinese-correct-answer-paren", response="正确答案是 (B)。", target="B", status="graded", extracted="B", correct=True),
    dict(id="explains-other-options-wrong", response="**Answer: C**\n\n- (A) This is wrong because the barrier is too high.\n- (B) That is incorrect: ethyl acetate shows a quartet.\n- (D) This is wrong as well.", target="C", status="graded", extracted="C", correct=True),
    dict(id="interjection-retracts", response="Answer: A\n\nHmm, actually that is incorrect, the ratio is inverted. So", target="B", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="harmony-final-channel", response="<|channel|>analysis<|message|>Option A fits; Answer: A? Check B.<|end|><|start|>assistant<|channel|>final<|message|>Answer: B<|return|>", target="B", status="graded", extracted="B", correct=True),
    dict(id="harmony-analysis-only", response="<|channel|>analysis<|message|>Option A fits; so Answer: A. But let me check", target="A", status="no_answer", extracted=None, correct=False, finish_reason="length"),
]
