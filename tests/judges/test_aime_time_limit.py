"""AIME reading is linear in the response length, and a sample past its time limit is a judge_error
with the reason while grading moves on. Timings are ratios against a baseline measured in the same test."""
from __future__ import annotations

import asyncio
import json
import random
import time

import pytest

from harness.grade import grade_run
from records import GenerationRecord
from harness.rundir import RunDir, RunSpec
from judges.rules import RulesJudge, aime, extract
from judges.rules.deadline import Deadline

SMALL = 280_000  # characters; the large response is 20 times this (5.6 MB)
SCALE = 20

# Responses that once made the reader quadratic, or that make it examine every candidate answer.
HOSTILE = {
    "answer-words": "answer answer ",                    # every trigger word, none an anchor (took 44 s at 5.6 MB)
    "anchors-without-answers": "the answer is correct, 1 ",  # every one an anchor whose answer is unreadable
    "chinese-anchors": "答案 x1 ",
    "empty-boxes": "\\boxed{}",                         # placeholders, walked back to the first
    "blank-lines-after-box": "\n",                      # after \\boxed{5}: the retraction scan
    "final-headings": "### Final answer\n",
}


def _response(name: str, chars: int) -> str:
    unit = HOSTILE[name]
    body = unit * (chars // len(unit))
    return "\\boxed{5}" + body if name == "blank-lines-after-box" else body


def _best_time(text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        aime.read_aime(text, Deadline(3600))
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("name", HOSTILE)
def test_reading_is_linear_in_response_length(name):
    small, large = _response(name, SMALL), _response(name, SMALL * SCALE)
    _best_time(small, 1)  # warm up
    t_small, t_large = _best_time(small, 3), _best_time(large, 2)
    # Linear reading takes 20-35x as long (memory effects at 5.6 MB); quadratic took ~400x. The margin
    # absorbs a loaded machine.
    assert t_large < 5 * SCALE * t_small, f"{name}: {t_large:.3f}s at 5.6 MB vs {t_small:.4f}s at 280 KB"


def test_the_backward_walk_finds_exactly_what_a_forward_scan_finds():
    # Matches near chunk boundaries (the first chunk is 4,096 characters, then 8,192, ...) included.
    rng = random.Random(7)
    pieces = ["answer", "Answer:", "answer is", "\\boxed{1}", "\\boxed {2}", "答案", " ", "\n", "x" * 50, "**"]
    for _ in range(20):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(100, 3000)))
        for pattern in (aime._CANDIDATE_RE, extract._BOX_RE):
            start = rng.randint(0, len(text) // 2)
            forward = [m.start() for m in pattern.finditer(text, start)]
            backward = [m.start() for m in extract.finditer_from_last(pattern, text, start)]
            assert backward == forward[::-1]


def _record(item_id: str, response: str, target: str) -> GenerationRecord:
    return GenerationRecord(
        task="aime", item_id=item_id, sample=0, messages=[{"role": "user", "content": "q"}], target=target,
        response=response, finish_reason="stop", usage={"prompt_tokens": 1, "completion_tokens": 1},
        latency_s=0.0, engine={}, seed=0, meta={},
    )


SLOW_TO_READ = "the answer is correct, 1 " * 100_000  # 2.5 MB of anchors with no readable answer
SLOW_TO_EVALUATE = "\\boxed{(\\sqrt{2}+\\sqrt{3}+\\sqrt{5}+\\sqrt{7})^{200}}"  # sympy works for minutes


def test_reading_past_the_time_limit_is_a_judge_error_with_the_reason(monkeypatch):
    start = time.perf_counter()
    full = aime.read_aime(SLOW_TO_READ, Deadline(3600))
    unlimited = time.perf_counter() - start
    assert full.text is None  # the whole walk finds nothing

    monkeypatch.setattr(aime, "TIME_LIMIT_S", unlimited / 20)
    start = time.perf_counter()
    verdict = RulesJudge().grade(_record("q", SLOW_TO_READ, "1"))
    limited = time.perf_counter() - start
    assert (verdict.status, verdict.correct, verdict.extracted) == ("judge_error", None, None)
    assert verdict.detail["error"] == f"timed out after {unlimited / 20:g} s reading the answer"
    assert limited < unlimited / 2  # it stopped, rather than finishing and then complaining


def test_evaluation_past_the_time_limit_kills_the_worker_and_the_next_sample_is_graded(monkeypatch):
    judge = RulesJudge()
    assert judge.grade(_record("warm", "\\boxed{\\sqrt{4}}", "2")).correct is True  # a started worker
    monkeypatch.setattr(aime, "TIME_LIMIT_S", 0.5)
    start = time.perf_counter()
    verdict = judge.grade(_record("slow", SLOW_TO_EVALUATE, "1"))
    assert time.perf_counter() - start < 30  # the limit, not the minutes sympy would take
    assert (verdict.status, verdict.correct) == ("judge_error", None)
    assert verdict.detail["error"] == ("timed out after 0.5 s evaluating the answer "
                                       "(\\sqrt{2}+\\sqrt{3}+\\sqrt{5}+\\sqrt{7})^{200}")
    monkeypatch.setattr(aime, "TIME_LIMIT_S", 60.0)  # a fresh worker may need to start (sympy import)
    after = judge.grade(_record("next", "\\boxed{\\binom{10}{3}}", "120"))
    assert (after.status, after.correct, after.extracted) == ("graded", True, "120")


def test_the_grade_stage_records_the_timeout_and_grades_the_rest(tmp_path, monkeypatch):
    rows = [("a-right", "\\boxed{\\frac{1080}{2}}", "540"), ("b-slow", SLOW_TO_READ, "1"), ("c-wrong", "Answer: 12", "13")]
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    run.write_spec(RunSpec(task="aime", dataset_path="inline", dataset_sha256="0" * 64, item_ids=[r[0] for r in rows],
                           samples=1, engine_name="openai", model="m", engine={}, sampling={}, seed=0))
    with open(run.generations_path, "w") as f:
        for item_id, response, target in rows:
            f.write(json.dumps(_record(item_id, response, target).to_dict()) + "\n")
    start = time.perf_counter()
    aime.read_aime(SLOW_TO_READ, Deadline(3600))
    limit = (time.perf_counter() - start) / 20  # the slow one times out; the others take microseconds
    monkeypatch.setattr(aime, "TIME_LIMIT_S", limit)
    judge = RulesJudge()
    summary = asyncio.run(grade_run(run.path, judge, show_progress=False))
    grades = {g["item_id"]: g for g in map(json.loads, (run.judge_dir(judge.judge_id) / "samples.jsonl").read_text().splitlines())}
    assert {k: (g["status"], g["correct"]) for k, g in grades.items()} == {
        "a-right": ("graded", True), "b-slow": ("judge_error", None), "c-wrong": ("graded", False)}
    assert grades["b-slow"]["detail"]["error"] == f"timed out after {limit:g} s reading the answer"
    assert summary.counts["judge_error"] == 1 and summary.counts["graded"] == 2
    assert summary.coverage_complete is False  # a rerun of grade retries it
