"""Golden AIME responses, written the way reasoning models answer, with the verdict each must get.

Each case: id, response, target (as in the dataset, possibly zero-padded), and the expected
status, extracted value and correctness. finish_reason is "stop" unless given.
"""

# A reasoning block as R1-style models write it: exploratory, with intermediate boxed values.
THINK_WITH_BOXES = r"""<think>
Okay, so I need to find the number of ordered pairs $(a, b)$ with $1 \le a, b \le 50$ such that $a^2 + b^2$ is divisible by $5$.

Let me think about squares mod 5. Squares mod 5 are $0, 1, 4$. So $a^2 + b^2 \equiv 0$ means either both are $0$, or one is $1$ and the other is $4$.

Numbers from 1 to 50 divisible by 5: there are 10. So both-zero pairs: $10 \cdot 10 = 100$. So that part is \boxed{100}.

Residues giving $a^2 \equiv 1$: $a \equiv 1, 4$, that's 20 numbers. Residues giving $a^2 \equiv 4$: $a \equiv 2, 3$, also 20 numbers.

So pairs with one 1 and one 4: $20 \cdot 20 \cdot 2 = 800$. Hmm wait, is that right? Ordered pairs: $(a, b)$ with $a^2 \equiv 1, b^2 \equiv 4$ gives 400, and the reverse gives 400. So 800.

Total $= 100 + 800 = 900$. Let me double check with a smaller case, $1 \le a, b \le 5$: pairs are $(5,5)$, and $(1,2),(1,3),(4,2),(4,3)$ and reverses: $1 + 8 = 9$. Formula: $1 + 2 \cdot 2 \cdot 2 = 9$. Good.

So the answer would be \boxed{900}. The problem says to put the final answer in \boxed{}, so I'll do that.
</think>

"""

# A long non-reasoning-model style derivation (no think tags) with answers restated along the way.
LONG_DERIVATION = r"""We want the remainder when $N = \sum_{k=1}^{100} k \cdot 2^k$ is divided by $1000$.

**Step 1.** Use the closed form $\sum_{k=1}^{n} k x^k = \frac{x - (n+1)x^{n+1} + n x^{n+2}}{(1-x)^2}$.
With $x = 2$ and $n = 100$: $N = 2 - 101 \cdot 2^{101} + 100 \cdot 2^{102} = 2 + 2^{101}(200 - 101) = 2 + 99 \cdot 2^{101}$.

**Step 2.** Compute $2^{101} \bmod 1000$. Since $2^{10} = 1024 \equiv 24$, we get $2^{100} \equiv 24^{10}$.
$24^2 = 576$, $24^4 \equiv 576^2 = 331776 \equiv 776$, $24^8 \equiv 776^2 = 602176 \equiv 176$,
so $24^{10} \equiv 176 \cdot 576 = 101376 \equiv 376$. Then $2^{101} \equiv 752$.

**Step 3.** $99 \cdot 752 = 74448 \equiv 448$, and $N \equiv 2 + 448 = 450$.
"""

# An R1-style answer to a distance problem, up to (not including) its final line.
R1_540 = r"""<think>
The hypotenuse is $\sqrt{324^2 + 432^2}$. Note $324 = 108 \cdot 3$ and $432 = 108 \cdot 4$, so it is $108 \cdot 5 = 540$. So maybe \boxed{540}.
</think>

Since $324 = 3 \cdot 108$ and $432 = 4 \cdot 108$, the distance is a scaled 3-4-5 triangle:
$$\sqrt{324^2 + 432^2} = 108 \cdot 5 = 540.$$

"""

CASES = [
    # --- where the final answer sits ---------------------------------------------------------------
    dict(id="think-then-boxed-final", response=THINK_WITH_BOXES + "Squares mod 5 are 0, 1, 4, so the count is $100 + 800$.\n\n**Final Answer**\n\\[\n\\boxed{900}\n\\]",
         target="900", status="graded", extracted="900", correct=True),
    dict(id="think-boxes-ignored-final-wrong", response=THINK_WITH_BOXES + "The total is $\\boxed{800}$.",
         target="900", status="graded", extracted="800", correct=False),
    dict(id="answer-only-inside-think", response=THINK_WITH_BOXES.replace("</think>\n\n", "") + "</think>\n\nI hope this helps!",
         target="900", status="no_answer", extracted=None, correct=False),
    dict(id="think-never-closed-truncated", response=THINK_WITH_BOXES.replace("</think>", "Wait, I should double check the reverse pairs"),
         target="900", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="close-tag-only-template-opened-think", response="Let me set up coordinates... so maybe \\boxed{14}.\n</think>\n\nPlacing the triangle on axes gives the area $\\boxed{84}$.",
         target="84", status="graded", extracted="84", correct=True),
    dict(id="two-think-blocks-last-wins", response="<think>try 1: \\boxed{5}</think>Partial result.<think>recheck: \\boxed{6}</think>\n\nThe answer is $\\boxed{7}$.",
         target="7", status="graded", extracted="7", correct=True),
    dict(id="intermediate-boxes-then-final", response="Part (i): the number of red tiles is \\boxed{12}.\nPart (ii): blue tiles \\boxed{24}.\nCombining, the total is \\boxed{36}.",
         target="036", status="graded", extracted="36", correct=True),
    dict(id="quoted-instruction-empty-box-first", response="The problem asks to put the final answer within \\boxed{}. Counting the lattice points gives $\\boxed{113}$.",
         target="113", status="graded", extracted="113", correct=True),
    dict(id="quoted-instruction-after-answer", response="Therefore $m + n = 113$, so the answer is $\\boxed{113}$.\n\n(As requested, the final answer is given in \\boxed{}.)",
         target="113", status="graded", extracted="113", correct=True),
    dict(id="placeholder-box-only", response="Please put your final answer in \\boxed{answer}. I was unable to complete the computation.",
         target="113", status="no_answer", extracted=None, correct=False),
    dict(id="empty-response", response="", target="113", status="no_answer", extracted=None, correct=False),
    dict(id="no-final-answer-prose", response=LONG_DERIVATION + "\nI am not confident in step 2, so I will stop here.",
         target="450", status="no_answer", extracted=None, correct=False),
    dict(id="long-derivation-then-answer-line", response=LONG_DERIVATION + "\nAnswer: 450",
         target="450", status="graded", extracted="450", correct=True),
    dict(id="long-derivation-the-answer-is", response=LONG_DERIVATION + "\nSo the answer is 450.",
         target="450", status="graded", extracted="450", correct=True),
    # --- answer forms ------------------------------------------------------------------------------
    dict(id="boxed-no-braces", response="Hence the number of paths is \\boxed 204", target="204", status="graded", extracted="204", correct=True),
    dict(id="boxed-no-braces-period", response="So we get $\\boxed 204$.", target="204", status="graded", extracted="204", correct=True),
    dict(id="fbox", response="Final: \\fbox{204}", target="204", status="graded", extracted="204", correct=True),
    dict(id="answer-colon", response="The sum telescopes.\n\nAnswer: 204", target="204", status="graded", extracted="204", correct=True),
    dict(id="answer-uppercase", response="ANSWER: 204", target="204", status="graded", extracted="204", correct=True),
    dict(id="final-answer-heading-next-line", response="Summing the cases gives 33.\n\n**Final Answer**\n\n33", target="033", status="graded", extracted="33", correct=True),
    dict(id="final-answer-colon-bold", response="**Final Answer:** 204", target="204", status="graded", extracted="204", correct=True),
    dict(id="answer-bold-inside", response="**Answer: 204**", target="204", status="graded", extracted="204", correct=True),
    dict(id="answer-then-boxed", response="Answer: $\\boxed{204}$", target="204", status="graded", extracted="204", correct=True),
    dict(id="minerva-style", response="Final Answer: The final answer is $204$. I hope it is correct.", target="204", status="graded", extracted="204", correct=True),
    dict(id="the-final-answer-is-inline-math", response="Thus the final answer is \\(\\boxed{204}\\).", target="204", status="graded", extracted="204", correct=True),
    dict(id="display-math-box", response="$$\\boxed{204}$$", target="204", status="graded", extracted="204", correct=True),
    dict(id="answer-is-correct-is-not-an-answer", response="We obtain \\boxed{25}. I believe the answer is correct.", target="25", status="graded", extracted="25", correct=True),
    dict(id="answer-is-words", response="The answer is twenty-five.", target="25", status="no_answer", extracted=None, correct=False),
    dict(id="answer-is-with-clause", response="So the answer is 12, since each pair is counted twice.", target="12", status="graded", extracted="12", correct=True),
    dict(id="answer-paren-math-inline", response="Therefore the answer is \\(204\\).", target="204", status="graded", extracted="204", correct=True),
    # --- normalisation -----------------------------------------------------------------------------
    dict(id="zero-padded-target", response="\\boxed{25}", target="025", status="graded", extracted="25", correct=True),
    dict(id="zero-padded-answer", response="\\boxed{025}", target="25", status="graded", extracted="25", correct=True),
    dict(id="both-padded", response="The answer is $\\boxed{007}$.", target="007", status="graded", extracted="7", correct=True),
    dict(id="m-plus-n-rhs", response="Since $m = 7$ and $n = 18$, we have $\\boxed{m+n=25}$.", target="025", status="graded", extracted="25", correct=True),
    dict(id="equation-before-box", response="Hence $m + n = \\boxed{25}$.", target="25", status="graded", extracted="25", correct=True),
    dict(id="x-equals-in-box", response="\\boxed{x = 25}", target="25", status="graded", extracted="25", correct=True),
    dict(id="degrees-circ", response="The angle is $\\boxed{25^\\circ}$.", target="25", status="graded", extracted="25", correct=True),
    dict(id="degrees-braced-circ", response="$\\angle ABC = \\boxed{25^{\\circ}}$", target="25", status="graded", extracted="25", correct=True),
    dict(id="degree-sign", response="\\boxed{25°}", target="25", status="graded", extracted="25", correct=True),
    dict(id="degrees-word", response="\\boxed{30 \\text{ degrees}}", target="30", status="graded", extracted="30", correct=True),
    dict(id="text-units", response="\\boxed{\\text{25 cm}}", target="25", status="graded", extracted="25", correct=True),
    dict(id="text-units-squared", response="The area is $\\boxed{84 \\text{ cm}^2}$.", target="84", status="graded", extracted="84", correct=True),
    dict(id="units-after-answer-colon", response="Final answer: 25 dollars.", target="25", status="graded", extracted="25", correct=True),
    dict(id="dollar-sign-currency", response="She paid $\\boxed{\\$25}$ in total.", target="25", status="graded", extracted="25", correct=True),
    dict(id="textbf-and-mathrm", response="\\boxed{\\textbf{204}} and restated: \\boxed{\\mathrm{204}}", target="204", status="graded", extracted="204", correct=True),
    dict(id="nested-braces", response="\\boxed{{25}}", target="25", status="graded", extracted="25", correct=True),
    dict(id="integer-decimal", response="\\boxed{25.0}", target="25", status="graded", extracted="25", correct=True),
    dict(id="integer-decimal-two-places", response="The expected value is $\\boxed{25.00}$.", target="25", status="graded", extracted="25", correct=True),
    dict(id="trailing-period-phrase", response="The answer is 25.", target="25", status="graded", extracted="25", correct=True),
    dict(id="dfrac-integer-valued", response="\\boxed{\\dfrac{50}{2}}", target="25", status="graded", extracted="25", correct=True),
    dict(id="frac-not-integer", response="\\boxed{\\frac{3}{4}}", target="75", status="graded", extracted="\\frac{3}{4}", correct=False),
    dict(id="no-tolerance", response="\\boxed{720.05}", target="720", status="graded", extracted="720.05", correct=False),
    dict(id="percent-not-rescaled-fraction", response="The probability is $\\boxed{0.25}$.", target="25", status="graded", extracted="0.25", correct=False),
    dict(id="percent-sign-kept-value", response="The discount is $\\boxed{25\\%}$.", target="25", status="graded", extracted="25", correct=True),
    dict(id="thousands-comma-out-of-range", response="\\boxed{1,000}", target="999", status="graded", extracted="1000", correct=False),
    dict(id="thousands-thin-space", response="\\boxed{1\\,000}", target="0", status="graded", extracted="1000", correct=False),
    dict(id="phrase-thousands-out-of-range", response="The answer is 1,024.", target="24", status="graded", extracted="1024", correct=False),
    dict(id="negative-out-of-range", response="\\boxed{-5}", target="5", status="graded", extracted="-5", correct=False),
    dict(id="unicode-minus", response="\\boxed{−5}", target="5", status="graded", extracted="-5", correct=False),
    dict(id="full-width-digits", response="答案是 \\boxed{２５}", target="25", status="graded", extracted="25", correct=True),
    dict(id="power-integer-valued", response="\\boxed{2^{5}}", target="32", status="graded", extracted="32", correct=True),
    dict(id="product-integer-valued", response="\\boxed{3 \\times 7}", target="21", status="graded", extracted="21", correct=True),
    dict(id="two-values-in-box", response="\\boxed{12, 13}", target="12", status="graded", extracted="12, 13", correct=False),
    dict(id="text-no-solution", response="**Final Answer**\n\\boxed{\\text{No solution}}", target="0", status="graded", extracted="No solution", correct=False),
    dict(id="zero-answer", response="No such $n$ exists below the bound, so the count is \\boxed{0}.", target="000", status="graded", extracted="0", correct=True),
    # --- abandoned and re-committed answers --------------------------------------------------------
    dict(id="abandoned-then-corrected-phrase", response="So the answer is 31. Wait, that's wrong: I double counted the diagonal. Correcting, the answer is 29.",
         target="29", status="graded", extracted="29", correct=True),
    dict(id="abandoned-box-no-replacement", response="Thus $\\boxed{31}$.\n\nWait, that's wrong — the case $n = 0$ must be excluded. Let me redo the count:",
         target="30", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="made-a-mistake-no-replacement", response="\\boxed{64}\n\nHmm, I made a mistake in the second case; the factor should be 3, not 2, so",
         target="96", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="retracted-then-bold-final", response="Answer: 17\n\nHmm, that's wrong; I forgot the degenerate triangle.\n\n**Final Answer:** 18",
         target="18", status="graded", extracted="18", correct=True),
    dict(id="double-check-confirms", response="Final Answer: \\boxed{204}.\n\nWait, let me verify: $12 \\times 17 = 204$. Yes, that is consistent.",
         target="204", status="graded", extracted="204", correct=True),
    dict(id="box-cut-off-mid-answer", response="First \\boxed{12} for the inner sum; so the total is \\boxed{20",
         target="204", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="earlier-phrase-later-box", response="I first thought the answer is 15, but recounting the symmetric cases carefully gives \\boxed{21}.",
         target="21", status="graded", extracted="21", correct=True),
    dict(id="later-phrase-overrides-earlier-box", response="A first pass gives \\boxed{15}. Recounting the symmetric cases, the final answer is 21.",
         target="21", status="graded", extracted="21", correct=True),
    dict(id="multiple-boxes-last-part", response="(a) \\boxed{3}\n(b) \\boxed{7}", target="7", status="graded", extracted="7", correct=True),
    # --- prose after the answer, remainders, other languages --------------------------------------
    dict(id="sentence-after-phrase-answer", response="The answer is 42. Note that 999 is the largest possible value.", target="42", status="graded", extracted="42", correct=True),
    dict(id="range-restated-after-box", response="Answer: \\boxed{42}\n\nThe problem says the answer is an integer between 0 and 999, and 42 is.", target="42", status="graded", extracted="42", correct=True),
    dict(id="answer-is-not", response="By the parity argument the answer is not 25; I could not pin it down further.", target="25", status="no_answer", extracted=None, correct=False),
    dict(id="answer-is-a-multiple", response="The answer is a multiple of 3, but I ran out of time to find it.", target="42", status="no_answer", extracted=None, correct=False),
    dict(id="remainder-equiv-pmod", response="So $N \\equiv 42 \\pmod{1000}$, and the remainder is $\\boxed{N \\equiv 42 \\pmod{1000}}$.", target="42", status="graded", extracted="42", correct=True),
    dict(id="remainder-text-mod", response="Thus the answer is $42 \\ (\\text{mod } 1000)$.", target="42", status="graded", extracted="42", correct=True),
    dict(id="decimal-phrase-not-integer", response="The answer is 25.5.", target="25", status="graded", extracted="25.5", correct=False),
    dict(id="chinese-anchor", response="因此，所以答案是 25。", target="25", status="graded", extracted="25", correct=True),
    dict(id="chinese-anchor-full-width-colon", response="最终答案：\\boxed{１１３}", target="113", status="graded", extracted="113", correct=True),
    dict(id="other-approach-called-wrong", response="\\boxed{25}\n\nThe naive count gives 30, but that is wrong because it counts rotations twice.", target="25", status="graded", extracted="25", correct=True),
    dict(id="no-thats-not-right", response="So the answer is 14. No, that's not right: the endpoints are excluded, leaving", target="12", status="no_answer", extracted=None, correct=False, finish_reason="length"),
    dict(id="harmony-final-channel", response="<|channel|>analysis<|message|>Try \\boxed{12}... no, 13.<|end|><|start|>assistant<|channel|>final<|message|>**Answer:** $\\boxed{13}$<|return|>", target="13", status="graded", extracted="13", correct=True),
    dict(id="bare-number-response", response="25", target="025", status="graded", extracted="25", correct=True),
    dict(id="bare-bold-padded-number", response="</think>\n\n**025**\n", target="25", status="graded", extracted="25", correct=True),
    dict(id="bare-number-after-reasoning-is-not-an-answer", response=LONG_DERIVATION + "\n450", target="450", status="no_answer", extracted=None, correct=False),
    # --- letters are never dropped to leave an integer ---------------------------------------------
    dict(id="letters-attached-variable", response="Solving for $k$, we find $k = \\boxed{3x}$.", target="3", status="graded", extracted="3x", correct=False),
    dict(id="letters-spaced-variable", response="The number of tilings is $\\boxed{12 n}$.", target="12", status="graded", extracted="12 n", correct=False),
    dict(id="letters-imaginary-unit", response="So $z^2 = \\boxed{2 i}$.", target="2", status="graded", extracted="2 i", correct=False),
    dict(id="letters-euler-e", response="The limit equals $\\boxed{12 e}$.", target="12", status="graded", extracted="12 e", correct=False),
    dict(id="letters-text-hedge", response="Hence the count is $\\boxed{7 \\text{ or more}}$.", target="7", status="graded", extracted="7 or more", correct=False),
    dict(id="letters-bare-metre-is-a-variable", response="\\boxed{540 m}", target="540", status="graded", extracted="540 m", correct=False),
    dict(id="phrase-hedge-or-more", response="So the answer is 7 or more.", target="7", status="graded", extracted="7 or more", correct=False),
    dict(id="phrase-value-word-squared", response="Therefore the answer is 5 squared.", target="5", status="graded", extracted="5 squared", correct=False),
    dict(id="phrase-counted-noun", response="Counting each orbit once, the answer is 12 triangles.", target="12", status="graded", extracted="12", correct=True),
    # --- units on the allow-list -------------------------------------------------------------------
    dict(id="unit-text-cm", response="The perimeter is $\\boxed{540 \\text{ cm}}$.", target="540", status="graded", extracted="540", correct=True),
    dict(id="unit-bare-cm", response="\\boxed{540 cm}", target="540", status="graded", extracted="540", correct=True),
    dict(id="unit-text-metre", response="The length of the fence is $\\boxed{540\\,\\text{m}}$.", target="540", status="graded", extracted="540", correct=True),
    dict(id="unit-square-units", response="The area of the hexagon is $\\boxed{540 \\text{ square units}}$.", target="540", status="graded", extracted="540", correct=True),
    dict(id="unit-dollars", response="**Final Answer:** \\boxed{540 \\text{ dollars}}", target="540", status="graded", extracted="540", correct=True),
    dict(id="unit-degrees-circ-540", response="Each exterior angle sums to $\\boxed{540^\\circ}$.", target="540", status="graded", extracted="540", correct=True),
    dict(id="unit-percent", response="The percentage is $\\boxed{54\\%}$.", target="54", status="graded", extracted="54", correct=True),
    # --- powers and exact expressions -------------------------------------------------------------
    dict(id="python-power", response="So the answer is $\\boxed{2**3}$.", target="8", status="graded", extracted="8", correct=True),
    dict(id="python-power-tower-not-digits", response="\\boxed{10**10**10}", target="101", status="graded", extracted="10^10^10", correct=False),
    dict(id="latex-power-tower-refused", response="\\boxed{10^{10^{10}}}", target="100", status="graded", extracted="10^{10^{10}}", correct=False),
    dict(id="sqrt-integer-valued", response=R1_540 + "**Final Answer**\n\\[\n\\boxed{\\sqrt{324^2 + (-432)^2}}\n\\]", target="540", status="graded", extracted="540", correct=True),
    dict(id="binomial-integer-valued", response="Choosing the 3 red positions among 10: $\\boxed{\\binom{10}{3}}$.", target="120", status="graded", extracted="120", correct=True),
    dict(id="power-minus-one-out-of-range", response="The number of nonempty subsets is $\\boxed{2^{10}-1}$.", target="023", status="graded", extracted="1023", correct=False),
    dict(id="fraction-integer-valued-540", response="Halving, the answer is $\\boxed{\\frac{1080}{2}}$.", target="540", status="graded", extracted="540", correct=True),
    dict(id="factorial-integer-valued", response="The number of orderings is $\\boxed{5!}$.", target="120", status="graded", extracted="120", correct=True),
    dict(id="surd-product-integer-valued", response="\\boxed{(\\sqrt{3}+1)(\\sqrt{3}-1)}", target="2", status="graded", extracted="2", correct=True),
    dict(id="sqrt-not-integer", response="The side length is $\\boxed{\\sqrt{2}}$.", target="1", status="graded", extracted="\\sqrt{2}", correct=False),
    dict(id="near-integer-decimal", response="Numerically, $\\boxed{540.0000001}$.", target="540", status="graded", extracted="540.0000001", correct=False),
    dict(id="tuple-not-thousands", response="The pair is $\\boxed{(3,141)}$.", target="141", status="graded", extracted="(3,141)", correct=False),
    dict(id="thousands-braced-comma", response="\\boxed{1{,}000}", target="0", status="graded", extracted="1000", correct=False),
    # --- styles models use ----------------------------------------------------------------------------
    dict(id="style-r1-display-box", response=R1_540 + "**Final Answer**\n\\[\n\\boxed{540}\n\\]", target="540", status="graded", extracted="540", correct=True),
    dict(id="style-inline-box-period", response="Thus the distance is $\\boxed{540}$.", target="540", status="graded", extracted="540", correct=True),
    dict(id="style-bold-final-answer-colon", response=R1_540 + "**Final Answer:** 540", target="540", status="graded", extracted="540", correct=True),
    dict(id="style-bold-number-phrase", response="Putting it together, the answer is **540**.", target="540", status="graded", extracted="540", correct=True),
    dict(id="style-answer-dollar-math", response="The answer is $540$", target="540", status="graded", extracted="540", correct=True),
    dict(id="style-chinese-colon", response="所以距离为 540。\n\n答案：540", target="540", status="graded", extracted="540", correct=True),
    dict(id="style-chinese-bold-boxed", response="**答案**：$\\boxed{540}$", target="540", status="graded", extracted="540", correct=True),
    dict(id="style-stated-first-then-verified", response="**Answer: 540**\n\nVerification: $324^2 + 432^2 = 104976 + 186624 = 291600 = 540^2$, so the distance 540 is right, and no other choice of signs changes it.",
         target="540", status="graded", extracted="540", correct=True),
    dict(id="style-boxed-first-then-checked", response="$\\boxed{540}$\n\n**Check.** With $a = 18$ we get $18 \\cdot 30 = 540$; trying $a = 19$ gives $570 > 560$, which is too large.",
         target="540", status="graded", extracted="540", correct=True),
    dict(id="style-revised-phrase-last-wins", response="So the answer is 480.\n\nWait, that's wrong: I dropped the factor $\\frac{9}{8}$. Recomputing, $480 \\cdot \\frac{9}{8} = 540$.\n\n**Final Answer:** 540",
         target="540", status="graded", extracted="540", correct=True),
    dict(id="style-revised-box-last-wins", response="This gives \\boxed{480}.\n\nHmm, that's not right — the reflections were not counted. Including them, the total is \\boxed{540}.",
         target="540", status="graded", extracted="540", correct=True),
    dict(id="style-answer-heading-bold-number", response=R1_540 + "### Final Answer\n\n**540**", target="540", status="graded", extracted="540", correct=True),
]
