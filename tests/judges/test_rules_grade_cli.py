"""`python -m harness grade RUN --judge rules` on real run directories: the verdicts users see."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from records import GenerationRecord
from harness.rundir import RunDir, RunSpec

ROOT = Path(__file__).resolve().parents[2]


def _write_run(path: Path, task: str, rows: list[tuple[str, str, str, str, dict]]) -> None:
    """rows: (item_id, target, response, finish_reason, meta), one sample per item."""
    run = RunDir(path)
    path.mkdir(parents=True)
    run.write_spec(RunSpec(task=task, dataset_path="inline", dataset_sha256="0" * 64, item_ids=[r[0] for r in rows],
                           samples=1, engine_name="openai", model="m", engine={}, sampling={}, seed=0))
    with open(run.generations_path, "w") as f:
        for item_id, target, response, finish, meta in rows:
            rec = GenerationRecord(
                task=task, item_id=item_id, sample=0, messages=[{"role": "user", "content": "q"}], target=target,
                response=response, finish_reason=finish, usage={"prompt_tokens": 1, "completion_tokens": 1},
                latency_s=0.0, engine={}, seed=0, meta=meta, error="HTTP 500" if finish == "error" else None,
            )
            f.write(json.dumps(rec.to_dict()) + "\n")


def _grade(path: Path) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-m", "harness", "grade", str(path), "--judge", "rules", "--no-progress"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 3), proc.stderr  # 3: coverage incomplete (a generation error)
    lines = (path / "grades" / "rules-v11" / "samples.jsonl").read_text().splitlines()
    return {g["item_id"]: g for g in map(json.loads, lines)}


def test_aime_statuses_through_the_grade_stage(tmp_path):
    run = tmp_path / "aime"
    _write_run(run, "aime", [
        ("right", "025", "<think>\\boxed{7}</think>\nSo $m+n = \\boxed{25}$.", "stop", {}),
        ("wrong", "025", "The answer is \\boxed{720.05}", "stop", {}),
        ("cut", "025", "<think>\nTrying n = 3 gives \\boxed{9}, then", "length", {}),
        ("silent", "025", "I could not solve it.", "stop", {}),
        ("failed", "025", "", "error", {}),
    ])
    grades = _grade(run)
    got = {k: (g["status"], g["correct"], g["extracted"]) for k, g in grades.items()}
    assert got == {
        "right": ("graded", True, "25"),
        "wrong": ("graded", False, "720.05"),
        "cut": ("truncated", False, None),
        "silent": ("no_answer", False, None),
        "failed": ("generation_error", None, None),
    }
    summary = json.loads((run / "grades" / "rules-v11" / "summary.json").read_text())
    assert summary["coverage_complete"] is False


def test_gpqa_letters_through_the_grade_stage(tmp_path):
    run = tmp_path / "gpqa"
    meta = {"letters": "ABCD"}
    _write_run(run, "gpqa", [
        ("bold", "C", "Considering the spin states...\n\n**Answer: C**", "stop", meta),
        ("cannot", "C", "Answer: Cannot be determined.", "stop", meta),
        ("fullwidth", "B", "Answer: Ｂ", "stop", meta),
        ("other", "A", "The answer is (D).", "stop", meta),
    ])
    grades = _grade(run)
    assert {k: (g["status"], g["extracted"], g["correct"]) for k, g in grades.items()} == {
        "bold": ("graded", "C", True),
        "cannot": ("no_answer", None, False),
        "fullwidth": ("graded", "B", True),
        "other": ("graded", "D", False),
    }
    summary = json.loads((run / "grades" / "rules-v11" / "summary.json").read_text())
    assert summary["coverage_complete"] is True
    assert summary["pass@1"] == 0.5
    assert summary["judge"]["id"] == "rules-v11"
    assert summary["judge"]["config"]["gpqa_parser"] == "gpqa-v11"
