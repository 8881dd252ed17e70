"""GPQA letters stated in free form (issue 11, item 1): each phrasing from real model output gets its letter,
hedges and mismatched option texts get none, and reading stays linear in the response length."""
from __future__ import annotations

import time

import pytest

from records import GenerationRecord
from judges.rules import RulesJudge
from judges.rules.gpqa import read_letter
from judges.rules.gpqa_options import option_in_text, options_for_record
from tasks import get_task

OPTIONS = ["2 peaks", "3 peaks", "6 peaks", "4 peaks"]


def _record(response: str, target: str, meta: dict | None = None, messages: list | None = None) -> GenerationRecord:
    return GenerationRecord(
        task="gpqa", item_id="q1", sample=0, messages=messages or [{"role": "user", "content": "q"}], target=target,
        response=response, finish_reason="stop", usage={"prompt_tokens": 1, "completion_tokens": 1}, latency_s=0.0,
        engine={}, seed=0, meta=meta if meta is not None else {"letters": "ABCD", "choices": OPTIONS},
    )


ISSUE_CASES = [
    ("paren-option-after-text", "The final product is **2,4-bis(4-hydroxyphenyl)but-2-enal (Option C)**.", "C"),
    ("lead-in-product-next-line", "Hence the correct product is:\n\n**B. (1R,2S)-2-methylcyclohexan-1-ol**", "B"),
    ("closest-answer", "The closest answer to our calculated value is **C. 3.9 x 10^5 GeV**", "C"),
    ("matches-option", "The doublet at 7.2 ppm and the singlet at 2.3 ppm fit. This matches option A.", "A"),
    ("likely-with-text", "Weighing the conditions, the correct answer is likely D: A = TsOH, B = H2O2", "D"),
    ("answer-first", "The process taking place is:\n\nC. somatic hypermutation\n\nSomatic hypermutation is the "
                     "process by which B cells mutate their variable regions; option A changes the constant region.", "C"),
    ("later-revision", "the correct answer is: C. 2 peaks\n\nHowever, this option is not available for the product "
                       "we found.\n\nThe closest correct answer is:\n\nD. 4 peaks", "D"),
    ("boxed-letter-with-text", "$\\boxed{B. \\ M^2 = (E_1+E_2)^2 - (p_1+p_2)^2}$", "B"),
    ("hedge-bold-options", "The product is **C. (R)-2-butanol** or **D. (S)-2-butanol**.", None),
    ("hedge-paren-or", "The answer is B (or C, as they are the same).", None),
    ("cannot-is-not-c", "Answer: Cannot be determined from the data.", None),
    ("both-a-and-c", "Both A and C are consistent with the spectrum.", None),
    ("quoted-instruction", 'I must end with "Answer: B" style formatting. Let me think about the structure first.', None),
    ("think-only", "<think>The answer is C.</think>\n\nI am not sure.", None),
    ("abandoned", "Answer: C\n\nWait, that's wrong: C double counts. Redoing it gives four.\n\nAnswer: D", "D"),
]


@pytest.mark.parametrize("response,want", [c[1:] for c in ISSUE_CASES], ids=[c[0] for c in ISSUE_CASES])
def test_issue_phrasings(response, want):
    assert read_letter(response).letter == want


# Letters that look like answers to a loose reader but are names, labels or listed options.
NOT_ANSWERS = [
    ("vitamin", "Vitamin A is the correct cofactor for this enzyme.", None),
    ("hepatitis", "Hepatitis B is the most likely diagnosis here.", None),
    ("point-group", "The point group is C2v.", None),
    ("species", "Note: A. thaliana was used. The reaction is an SN2. B. subtilis is not relevant.", None),
    ("option-headings", "Let's analyze:\n\n**A. methyl acetate**\nHas two singlets.\n\n**B. ethyl acetate**\nQuartet.\n\n"
                        "**C. acetone**\nOne singlet.\n\n**D. dimethyl ether**\nOne singlet.", None),
    ("reagent-letters", "**Answer:** A = TsOH, B = H2O2 would be my guess, but I am unsure.", None),
    ("conditional-pair", "If the solvent is protic, the answer is B; if aprotic, it is C.", None),
    ("first-listed-then-verdict", "(A) is incorrect. (B) is the correct answer.", "B"),
    ("conjunction-verdict", "Thus B is correct.", "B"),
]


@pytest.mark.parametrize("response,want", [c[1:] for c in NOT_ANSWERS], ids=[c[0] for c in NOT_ANSWERS])
def test_names_and_labels_are_not_answers(response, want):
    assert read_letter(response).letter == want


def test_answer_given_only_as_option_text_uses_the_samples_options():
    judge = RulesJudge()
    v = judge.grade(_record("Counting environments gives four.\n\n**Answer:** 4 peaks", "D"))
    assert (v.status, v.extracted, v.correct, v.detail["via"]) == ("graded", "D", True, "option text")
    # The latest statement decides; one that names two options is no answer, not the earlier single one.
    hedged = "The answer is 4 peaks.\n\nSo the final answer is 4 peaks or 6 peaks."
    assert judge.grade(_record(hedged, "D")).status == "no_answer"
    # Without the option texts the same response has no letter.
    assert judge.grade(_record("**Answer:** 4 peaks", "D", meta={"letters": "ABCD"})).status == "no_answer"


def test_option_texts_that_contain_each_other():
    opts = ["toluene", "toluene and chloroform", "chloroform", "neither toluene nor chloroform"]
    assert option_in_text("toluene and chloroform", opts) == 1
    assert option_in_text("neither toluene nor chloroform", opts) == 3
    assert option_in_text("Chloroform.", opts) == 2
    assert option_in_text("**Toluene**", opts) == 0
    # A short option must open the statement: "4" inside "42 peaks" or a sentence is not option "4".
    assert option_in_text("42 peaks", ["2", "4", "8", "12"]) is None
    assert option_in_text("4", ["2", "4", "8", "12"]) == 1
    # Decoration, case and spacing do not matter.
    assert option_in_text("3.9 x 10^5 GeV", ["$2.6 \\times 10^{5}$ GeV", "$3.9 \\times 10^{5}$ GeV"]) == 1


def test_letter_quoting_another_options_text_is_ambiguous_not_a_pick():
    v = RulesJudge().grade(_record("Four environments remain.\n\nThe correct answer is **C. 4 peaks**", "D"))
    assert (v.status, v.correct, v.extracted) == ("ambiguous", False, None)
    assert v.detail["letter"] == "C" and v.detail["quoted_option"] == "D"
    assert "C" in v.detail["reason"] and "D" in v.detail["reason"]
    # The letter with its own text, or an abbreviation of it, is an ordinary answer.
    assert RulesJudge().grade(_record("The correct answer is **D. 4 peaks**", "D")).correct is True
    assert RulesJudge().grade(_record("Answer: D. 4", "D")).correct is True


def test_old_records_without_choices_read_them_back_from_the_prompt():
    task = get_task("gpqa")
    item = task.load(task.demo_data_path)[1]  # pH of 0.001 M HCl: options 3, 1, 11, 7 shuffled
    prompt = task.render(item, 0, 7)
    assert prompt.meta["choices"] == [line[3:] for line in prompt.messages[0]["content"].splitlines()
                                      if line[:3] in ("A) ", "B) ", "C) ", "D) ")]
    old_meta = {k: v for k, v in prompt.meta.items() if k != "choices"}
    assert options_for_record(old_meta, prompt.messages, "ABCD") == prompt.meta["choices"]
    v = RulesJudge().grade(_record("The pH is 3, so the final answer is 3.", prompt.target, meta=old_meta,
                                   messages=prompt.messages))
    assert (v.status, v.extracted, v.correct) == ("graded", prompt.target, True)


HOSTILE_UNITS = {
    "lead-ins": "The correct product is:\n\n",
    "labels": "**C. 4 peaks** or ",
    "parens": "so the final answer is x (Option ",
    "statements": "the answer is 4 peaks; ",
    "is-words": "is is is ",
    "list-lines": "A. 2 peaks\nB. 3 peaks\n",
    "boxes": "\\boxed{C. ",
    "matches": "This matches option ",
}
# Every kind at once, on separate lines and all on one line (where a look back to the line start could grow).
HOSTILE = {
    "statements": HOSTILE_UNITS["statements"],
    "parens": HOSTILE_UNITS["parens"],
    "mixed": "".join(HOSTILE_UNITS.values()),
    "one-line": "".join(HOSTILE_UNITS.values()).replace("\n", " "),
}


def _grade_time(judge: RulesJudge, response: str) -> float:
    start = time.perf_counter()
    judge.grade(_record(response, "D"))
    return time.perf_counter() - start


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_5mb_response_reads_in_linear_time(name):
    # The 5 MB response must take about 100x the time of a 50 KB one of the same kind; quadratic reading
    # would take ~10,000x. Margin 5x for a shared, noisy machine; the small baseline is the best of 3.
    judge = RulesJudge()
    unit = HOSTILE[name]
    small = unit * (50_000 // len(unit))
    big = unit * (5_000_000 // len(unit))
    baseline = min(_grade_time(judge, small) for _ in range(3))
    elapsed = _grade_time(judge, big)
    assert elapsed < 5 * 100 * max(baseline, 1e-3), (name, elapsed, baseline)
