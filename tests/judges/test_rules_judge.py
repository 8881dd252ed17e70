"""The rules judge through its public surface: registry, ids, config, target handling, hostile input."""
from __future__ import annotations

import time

import pytest

from records import GenerationRecord
from judges import JudgeError, create_judge
from judges.rules import RulesJudge


def _record(task: str, response: str, target: str, finish_reason: str = "stop", meta: dict | None = None):
    return GenerationRecord(
        task=task, item_id="q1", sample=3, messages=[{"role": "user", "content": "q"}], target=target,
        response=response, finish_reason=finish_reason, usage={"prompt_tokens": 5, "completion_tokens": 7},
        latency_s=0.1, engine={"name": "openai"}, seed=1, meta=meta or {},
    )


def test_registry_builds_it_and_ignores_llm_options():
    judge = create_judge("rules", judge_model=None, judge_base_url=None, concurrency=8)
    assert isinstance(judge, RulesJudge)
    assert judge.judge_id == "rules-v11"
    assert judge.tasks == ("aime", "gpqa")
    assert judge.config()["aime_parser"].startswith("aime-v")
    assert judge.config()["gpqa_parser"].startswith("gpqa-v")


def test_other_tasks_are_refused():
    judge = RulesJudge()
    with pytest.raises(JudgeError, match="hle"):
        judge.check_task("hle")
    with pytest.raises(JudgeError, match="hle"):
        judge.grade(_record("hle", "Answer: 4", "4"))


def test_gpqa_letters_come_from_the_record_meta_as_the_task_writes_them():
    # tasks/gpqa stores the choice letters as one string, e.g. "ABCD".
    judge = RulesJudge()
    assert judge.grade(_record("gpqa", "Answer: D", "D", meta={"letters": "ABCD"})).correct is True
    assert judge.grade(_record("gpqa", "Answer: D", "C", meta={"letters": "ABC"})).status == "no_answer"


def test_bad_targets_are_judge_errors_not_crashes():
    judge = RulesJudge()
    v = judge.grade(_record("aime", "\\boxed{3}", "three"))
    assert (v.status, v.correct) == ("judge_error", None)
    assert "three" in v.detail["error"]
    v = judge.grade(_record("gpqa", "Answer: A", "Q"))
    assert (v.status, v.correct) == ("judge_error", None)


def test_truncated_without_answer_is_no_answer_for_the_grade_stage_to_relabel():
    v = RulesJudge().grade(_record("aime", "<think>\nLet me try n = 3, then", "25", finish_reason="length"))
    assert (v.status, v.correct, v.extracted) == ("no_answer", False, None)
    assert "think" in v.detail["note"]


def test_an_aime_answer_still_weighed_when_the_token_limit_hit_is_no_answer():
    # the chat template opened <think> (no tag in the response): stopped at the limit, a guess is not a commitment
    response = "So n = 13 fails. Perhaps the answer is n = 14, since the next formula gives"
    v = RulesJudge().grade(_record("aime", response, "14", finish_reason="length"))
    assert (v.status, v.correct) == ("no_answer", False) and "cut off" in v.detail["note"]
    assert RulesJudge().grade(_record("aime", response, "14")).correct is True  # finished normally: read as before


def test_verdict_detail_says_why_an_answer_is_wrong():
    judge = RulesJudge()
    assert judge.grade(_record("aime", "\\boxed{1000}", "0")).detail["reason"] == "outside 0-999"
    assert judge.grade(_record("aime", "\\boxed{2.5}", "2")).detail["reason"] == "not an integer"
    assert judge.grade(_record("gpqa", "Answer: E", "A")).detail["note"] == "letter E is not a choice"


# (prefix, repeated unit, repeats): a few hundred KB each, built to make a parser look at every position.
HOSTILE = {
    "newlines": ("", "\n", 200_000),
    "anchors": ("", "Answer: ", 50_000),
    "the-answer-is": ("", "the answer is ", 30_000),
    "unclosed-boxes": ("", "\\boxed{", 50_000),
    "empty-boxes": ("", "\\boxed{}", 50_000),
    "deep-braces": ("\\boxed{", "{", 200_000),
    "wrappers": ("Answer: ", "(", 100_000),
    "options": ("Answer: ", "option ", 30_000),
    # an answer phrase, then a run of spaces to the end (real responses end in 245,000 spaces): each anchor must
    # not let two space quantifiers meet before its letter
    "answer-is-spaces": ("The answer is ", " ", 200_000),
    "answer-colon-spaces": ("Answer:", " ", 200_000),
    "answer-word-spaces": ("which is the answer", " ", 200_000),
    "cjk-answer-spaces": ("答案：", " ", 200_000),
    "cjk-choose-spaces": ("故选", " ", 200_000),
    "option-is-spaces": ("The correct option is", " ", 200_000),
}
SCALE = 20  # the baseline is the same response at 1/SCALE of its length


def _grading_time(judge: RulesJudge, response: str) -> float:
    start = time.perf_counter()
    for task, target in (("aime", "25"), ("gpqa", "A")):
        assert judge.grade(_record(task, response, target)).correct is False
    return time.perf_counter() - start


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_responses_grade_in_linear_time(name):
    prefix, unit, repeats = HOSTILE[name]
    judge = RulesJudge()
    small, full = prefix + unit * (repeats // SCALE), prefix + unit * repeats
    _grading_time(judge, small)  # warm up
    baseline = min(_grading_time(judge, small) for _ in range(3))
    took = _grading_time(judge, full)
    if took >= 5 * SCALE * baseline:
        took = min(took, _grading_time(judge, full))  # a second look before blaming the code for a busy machine
    # Linear grading takes up to ~SCALE times the baseline; quadratic takes ~SCALE**2 = 400 times.
    assert took < 5 * SCALE * baseline, f"{name}: {took:.3f}s vs {baseline:.4f}s at 1/{SCALE} of the length"


AIME_FORMATS = [
    "\\boxed{%d}", "\\boxed{%03d}", "Answer: %d", "The answer is $%d$.", "\\boxed{%d.0}", "\\boxed{%d^\\circ}",
    "**Final Answer**\n\n\\[\\boxed{%d}\\]", "<think>\\boxed{%d}7</think>\nThus $m+n=\\boxed{%d}$.", "\\fbox{%d} units",
]


def test_every_aime_integer_in_every_format():
    judge = RulesJudge()
    for fmt in AIME_FORMATS:
        for n in range(1000):
            response = fmt % ((n, n) if fmt.count("%") == 2 else n)
            right = judge.grade(_record("aime", response, "%03d" % n))
            wrong = judge.grade(_record("aime", response, str((n + 1) % 1000)))
            assert (right.status, right.correct, right.extracted) == ("graded", True, str(n)), response
            assert (wrong.status, wrong.correct) == ("graded", False), response


GPQA_FORMATS = ["Answer: %s", "Answer: (%s)", "**Answer:** %s", "**Answer: %s**", "\\boxed{%s}", "The correct answer is %s.",
                "final answer: %s", "%s", "(%s)", "Reasoning...\n\nAnswer: \\boxed{\\text{%s}}"]


@pytest.mark.parametrize("letters", ["ABCD", "ABCDE", "ABCDEFGHIJ"])
def test_every_letter_in_every_format(letters):
    judge = RulesJudge()
    for fmt in GPQA_FORMATS:
        for gold in letters:
            for shown in (gold, gold.lower()) if fmt.startswith(("final", "\\boxed", "Answer: (")) else (gold,):
                response = fmt % shown
                v = judge.grade(_record("gpqa", response, gold, meta={"letters": letters}))
                assert (v.status, v.correct, v.extracted) == ("graded", True, gold), response
                other = letters[(letters.index(gold) + 1) % len(letters)]
                assert judge.grade(_record("gpqa", response, other, meta={"letters": letters})).correct is False
