"""The report reads summaries through GradeSummary's typed views: per-category and per-item rows, HLE scores."""
from __future__ import annotations

from harness.grade_summary import GradeSummary, GroupScore, HleScores

BASE = {"task": "hle", "judge": {"id": "llm-x", "config": {"model": "m"}}, "pass@1": 0.5, "pass@1_stderr": 0.1,
        "coverage_complete": True, "counts": {"expected": 4, "graded": 4},
        "per_category": {"Math": {"items": 2, "pass@1": 0.75, "pass@1_stderr": 0.25}},
        "per_item": {"q1": {"samples": 2, "correct": 1, "pass@1": 0.5}}}


def test_group_rows_read_as_records():
    s = GradeSummary.from_dict(BASE)
    assert s.category_scores() == {"Math": GroupScore(pass1=0.75, pass1_stderr=0.25, items=2)}
    assert s.item_scores() == {"q1": GroupScore(pass1=0.5, samples=2, correct=1)}
    assert s.judge_config == {"model": "m"}


def test_hle_scores_come_from_the_task_metrics_and_are_absent_elsewhere():
    s = GradeSummary.from_dict({**BASE, "accuracy": 50.0, "accuracy_ci95_half_width": 34.6, "accuracy_n": 8,
                                "calibration_error": None, "calibration_not_computable": "needs 100"})
    assert s.hle == HleScores(accuracy=50.0, accuracy_ci95_half_width=34.6, accuracy_n=8,
                              calibration_not_computable="needs 100")
    assert GradeSummary.from_dict(BASE).hle is None


def test_a_summary_without_breakdowns_has_empty_views():
    s = GradeSummary.from_dict({k: v for k, v in BASE.items() if k not in ("per_category", "per_item")})
    assert s.category_scores() == {} and s.item_scores() == {} and s.judge_config == {"model": "m"}
