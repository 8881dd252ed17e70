"""The grade stage on generation records of the wrong shape: a clean error naming file, line and field."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from records import GenerationRecord, RecordError
from harness.rundir import RunDir, RunSpec


def good_record(name: str, **changes) -> dict:
    rec = GenerationRecord(task="aime", item_id=name, sample=0, messages=[{"role": "user", "content": "q"}],
                           target="25", response="\\boxed{25}", finish_reason="stop",
                           usage={"prompt_tokens": 1, "completion_tokens": 1}, latency_s=0.1, engine={}, seed=0)
    return {**rec.to_dict(), **changes}


def write_run(path: Path, rows: list[dict]) -> Path:
    run = RunDir(path)
    path.mkdir(parents=True)
    ids = ["a", "b"]
    run.write_spec(RunSpec(task="aime", dataset_path="inline", dataset_sha256="0" * 64, item_ids=ids, samples=1,
                           engine_name="openai", model="m", engine={}, sampling={}, seed=0))
    run.generations_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("change, field, says", [
    ({"sample": "x"}, "sample", "must be an integer, got 'x'"),
    ({"sample": True}, "sample", "must be an integer, got True"),
    ({"item_id": 7}, "item_id", "must be a string, got 7"),
    ({"usage": None}, "usage", "must be an object, got None (null)"),
    ({"usage": {"completion_tokens": "5"}}, "usage.completion_tokens", "must be an integer"),
    ({"response": None}, "response", "must be a string"),
    ({"messages": "hi"}, "messages", "must be a list"),
    ({"seed": 1.5}, "seed", "must be an integer or null"),
    ({"finish_reason": 3}, "finish_reason", "must be a string"),
])
def test_wrong_types_name_file_line_and_field(tmp_path, capsys, change, field, says):
    run = write_run(tmp_path / "run", [good_record("a"), good_record("b", **change)])
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"generations.jsonl:2: field {field!r} {says}" in err and "Traceback" not in err
    assert not (run / "grades").exists()  # nothing half-written


def test_missing_response_is_named(tmp_path, capsys):
    row = good_record("b")
    del row["response"]
    run = write_run(tmp_path / "run", [good_record("a"), row])
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 2
    assert "generations.jsonl:2: missing field(s) response" in capsys.readouterr().err


def test_a_line_that_is_not_an_object_is_named(tmp_path):
    with pytest.raises(RecordError, match=r"here:3: expected a JSON object, got list"):
        GenerationRecord.from_dict([1, 2], where="here:3")


def test_unknown_finish_reason_is_a_generation_error_not_graded(tmp_path, capsys):
    run = write_run(tmp_path / "run", [good_record("a"), good_record("b", finish_reason="content_filter")])
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 3  # coverage incomplete
    grades = {g["item_id"]: g for g in map(json.loads, (run / "grades/rules-v11/samples.jsonl").read_text().splitlines())}
    assert (grades["a"]["status"], grades["a"]["correct"]) == ("graded", True)
    b = grades["b"]
    assert (b["status"], b["correct"], b["extracted"]) == ("generation_error", None, None)
    assert "unknown finish_reason 'content_filter'" in b["detail"]["error"]
    summary = json.loads((run / "grades/rules-v11/summary.json").read_text())
    assert summary["counts"]["generation_error"] == 1 and summary["counts"]["graded"] == 1
    assert summary["coverage_complete"] is False and summary["pass@1"] == 0.5
    line = capsys.readouterr().out
    assert "1 graded" in line and "0 ambiguous" in line and "1 generation errors" in line
