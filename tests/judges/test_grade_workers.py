"""Grading in worker processes: a sample whose reading never ends is stopped from outside, becomes a
judge_error with the reason, and every other sample is graded; the run's time is bounded by the limit."""
from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import time

import pytest

from harness.grade import grade_run
from records import GenerationRecord
from judges.rules import RulesJudge, gpqa
from judges.rules.grade_workers import grade_in_workers
from tests.judges.test_rules_grade_cli import _write_run

# A real catastrophic pattern: nested quantifiers backtrack ~2^n steps on n letters with no "b".
_CATASTROPHIC = re.compile(r"(a+)+b")
_STALLS = "a" * 64


class StallingRulesJudge(RulesJudge):
    """The rules judge, plus a pattern that never finishes on one response and never looks at a clock."""

    worker_limit_s = 1.0

    def grade(self, record):
        if _STALLS in (record.response or ""):
            _CATASTROPHIC.match(record.response)
        return super().grade(record)


def _rows(n: int, stalls: set[int]) -> list[tuple[str, str, str, str, dict]]:
    letters = "ABCD"
    return [(f"q{i:03d}", letters[i % 4], _STALLS if i in stalls else f"Answer: {letters[i % 4]}", "stop",
             {"letters": letters}) for i in range(n)]


def test_a_stalled_sample_is_stopped_from_outside_and_grading_goes_on(tmp_path):
    run = tmp_path / "gpqa"
    _write_run(run, "gpqa", _rows(40, stalls={3, 17}))
    judge = StallingRulesJudge()
    assert gpqa.TIME_LIMIT_S > judge.worker_limit_s  # the limit kept from outside stops it, not the reader's
    start = time.monotonic()
    summary = asyncio.run(grade_run(run, judge, show_progress=False))
    elapsed = time.monotonic() - start
    grades = {g["item_id"]: g for g in map(json.loads, (run / "grades" / "rules-v11" / "samples.jsonl").open())}
    stalled = {k for k, g in grades.items() if g["status"] == "judge_error"}
    assert stalled == {"q003", "q017"}
    assert grades["q003"]["detail"]["error"] == "timed out after 1 s (the grading worker was stopped)"
    assert all(g["correct"] for k, g in grades.items() if k not in stalled)
    assert summary.counts["graded"] == 38 and summary.coverage_complete is False
    # The target: no run takes longer than samples x limit / workers (here one worker: a small run).
    assert elapsed < 40 * judge.worker_limit_s


def test_a_worker_that_dies_is_replaced_and_only_its_sample_is_lost():
    class DyingJudge(RulesJudge):
        def grade(self, record):
            if record.response == "die":
                os._exit(7)
            return super().grade(record)

    records = [(i, _record(r, target="ABCD"[i])) for i, r in enumerate(["Answer: A", "die", "Answer: B", "Answer: C"])]
    verdicts = grade_in_workers(DyingJudge(), records, limit_s=30.0)
    assert verdicts[1].status == "judge_error"
    assert verdicts[1].detail["error"] == "the grading worker died (exit code 7)"
    assert [(verdicts[i].status, verdicts[i].extracted, verdicts[i].correct) for i in (0, 2, 3)] == [
        ("graded", "A", True), ("graded", "B", False), ("graded", "C", False)]


def test_workers_give_the_verdicts_of_in_process_grading():
    judge = RulesJudge()
    responses = ["Answer: A", "The correct answer is (C).", "\\boxed{D}", "no idea", "Answer: E", "<think>A"]
    records = [(i, _record(r, target="C")) for i, r in enumerate(responses * 50)]
    verdicts = grade_in_workers(judge, records, limit_s=judge.worker_limit_s, workers=2)
    assert len(verdicts) == len(records)
    for i, rec in records:
        assert verdicts[i] == judge.grade(rec)


def _record(response: str, target: str) -> GenerationRecord:
    return GenerationRecord(
        task="gpqa", item_id="q", sample=0, messages=[{"role": "user", "content": "q"}], target=target,
        response=response, finish_reason="stop", usage={"prompt_tokens": 1, "completion_tokens": 1},
        latency_s=0.0, engine={}, seed=0, meta={"letters": "ABCD"},
    )



class SleepingJudge(RulesJudge):
    """Sleeps past any limit on the chosen responses and logs every grade to a file, one line per grade."""

    def __init__(self, log, sleeps: set[str]):
        self.log, self.sleeps = log, sleeps

    def grade(self, record):
        with open(self.log, "a") as f:
            f.write(record.response + "\n")
        if record.response in self.sleeps:
            time.sleep(120)
        return super().grade(record)


@pytest.mark.parametrize("workers", [1, 2])
def test_verdicts_sent_in_groups_still_hold_the_per_sample_limit(tmp_path, workers):
    # Two stalls inside one batch of positions, after fast samples whose verdicts the worker still holds
    # (unsent), and one in another batch: each stall is stopped at the limit, every other sample is graded.
    from judges.rules import grade_workers

    n, stalls = 1100, {40: "Answer: A #40", 130: "Answer: C #130", 700: "Answer: A #700"}
    assert 130 < grade_workers.BATCH < 700 < n  # two stalls in the middle of the first batch, one in another
    records = [(i, _record(f"Answer: {'ABCD'[i % 4]} #{i}", target="ABCD"[i % 4])) for i in range(n)]
    judge, limit = SleepingJudge(tmp_path / "graded.log", set(stalls.values())), 1.0
    start = time.monotonic()
    progress = []
    verdicts = grade_in_workers(judge, records, limit_s=limit, workers=workers, on_done=progress.append)
    elapsed = time.monotonic() - start
    assert sum(progress) == n  # the progress bar counts every sample once, the stopped ones included
    stalled = {i for i, v in verdicts.items() if v.status == "judge_error"}
    assert stalled == set(stalls)
    assert all(verdicts[i].detail["error"] == "timed out after 1 s (the grading worker was stopped)" for i in stalled)
    assert all(verdicts[i].status == "graded" and verdicts[i].correct for i in range(n) if i not in stalled)
    assert elapsed < n * limit / workers  # the bound: samples x limit / workers
    assert elapsed < len(stalls) * limit + 15  # in practice: the stalls, plus the grading and the worker starts
    graded = (tmp_path / "graded.log").read_text().splitlines()
    # verdicts held when a worker is stopped are graded again by its replacement, never lost; a stall once
    assert set(graded) == {rec.response for _, rec in records}
    assert all(graded.count(response) == 1 for response in stalls.values())


def test_a_slow_sympy_helper_start_is_not_charged_to_the_sample():
    from judges.rules import sympy_pool

    class HelperStartingJudge(RulesJudge):
        def grade(self, record):
            if record.response == "start a helper":
                sympy_pool.startup_hook(True)  # what sympy_pool does around a helper's start
                time.sleep(2.5)
                sympy_pool.startup_hook(False)
                return super().grade(dataclasses.replace(record, response="Answer: A"))
            return super().grade(record)

    records = [(i, _record(r, target="A")) for i, r in enumerate(["Answer: A", "start a helper", "Answer: A"])]
    verdicts = grade_in_workers(HelperStartingJudge(), records, limit_s=1.0)
    assert [(v.status, v.correct) for v in (verdicts[0], verdicts[1], verdicts[2])] == [("graded", True)] * 3
