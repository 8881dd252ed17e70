"""The run layout lives in harness/rundir.py: summary.json as a typed record, judges by short name or full id."""
import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import RunDirError
from harness.grade_summary import GradeSummary, read_summary
from harness.rundir import GRADE_SAMPLES, SUMMARY, RunDir, judge_kind, resolve_judge
from judges import JUDGES
from tests.judges_llm.runs import make_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def graded_run(tmp_path):
    run = make_run(tmp_path / "gpqa-run", "gpqa", lambda r: "Answer: A", samples=2)
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    return run


def test_summary_record_writes_the_same_keys_it_reads(graded_run):
    path = RunDir(graded_run).summary_path("rules-v11")
    raw = json.loads(path.read_text())
    summary = read_summary(path)
    assert summary.to_dict() == raw and list(summary.to_dict()) == list(raw)
    assert summary.judge_id == "rules-v11" and summary.pass1 == raw["pass@1"] and summary.coverage_complete is True


def test_a_summary_written_before_the_record_still_reads(graded_run, capsys):
    path = RunDir(graded_run).summary_path("rules-v11")
    old = json.loads(path.read_text())
    for key in ("pass@1_valid", "mean_completion_tokens", "graded_at", "task_options"):
        del old[key]  # keys later versions added
    old["accuracy"] = 12.5  # a task metric at the top level, as HLE writes it
    path.write_text(json.dumps(old))
    summary = read_summary(path)
    assert summary.task_metrics == {"accuracy": 12.5} and summary.to_dict()["accuracy"] == 12.5
    capsys.readouterr()
    assert main(["summary", str(graded_run), "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["pass@1"] == old["pass@1"] and row["accuracy"] == 12.5


def test_a_summary_without_its_judge_names_the_file(graded_run, capsys):
    path = RunDir(graded_run).summary_path("rules-v11")
    data = json.loads(path.read_text())
    del data["judge"]
    path.write_text(json.dumps(data))
    with pytest.raises(RunDirError, match=re.escape(str(path)) + ".*'judge' missing"):
        read_summary(path)
    assert main(["summary", str(graded_run)]) == 2
    assert str(path) in capsys.readouterr().err


def test_summary_marks_validity_from_the_record(graded_run, capsys):
    capsys.readouterr()
    assert main(["summary", str(graded_run)]) == 0
    assert "NOT VALID" not in capsys.readouterr().out
    path = RunDir(graded_run).summary_path("rules-v11")
    summary = read_summary(path)
    summary.coverage_complete = False
    path.write_text(json.dumps(summary.to_dict()))
    assert main(["summary", str(graded_run)]) == 0
    out = capsys.readouterr().out
    assert "NOT VALID" in out.splitlines()[2] and "NOT VALID: coverage incomplete" in out


def test_short_name_and_full_id_name_one_judge(graded_run, tmp_path, capsys):
    other = make_run(tmp_path / "gpqa-other", "gpqa", lambda r: "Answer: B", samples=2)
    assert main(["grade", str(other), "--judge", "rules-v11", "--no-progress"]) == 0  # a full id grades too
    assert (other / "grades" / "rules-v11" / GRADE_SAMPLES).is_file()
    capsys.readouterr()
    results = []
    for name in ("rules", "rules-v11"):
        assert main(["compare", str(graded_run), str(other), "--judge", name, "--json"]) == 0
        results.append(json.loads(capsys.readouterr().out))
    assert results[0] == results[1] and results[0]["judge"] == "rules-v11"
    assert main(["grade", str(other), "--judge", "rules-v1", "--no-progress"]) == 2  # not what `rules` makes now
    assert "these options make judge rules-v11" in capsys.readouterr().err


def test_resolve_judge_refuses_what_is_not_one_judge():
    here = ["hybrid-rules-v11-llm-m-1a2b", "llm-m-1a2b", "llm-n-3c4d", "rules-v11"]
    assert resolve_judge("rules+llm", here, "r") == "hybrid-rules-v11-llm-m-1a2b"
    assert resolve_judge("llm-n-3c4d", here, "r") == "llm-n-3c4d"
    with pytest.raises(RunDirError, match="could be any of llm-m-1a2b, llm-n-3c4d"):
        resolve_judge("llm", here, "r")
    with pytest.raises(RunDirError, match="no grades for gpt; judges here: hybrid"):
        resolve_judge("gpt", here, "r")
    assert [judge_kind(j, JUDGES) for j in here] == ["rules+llm", "llm", "llm", "rules"]


def test_no_module_outside_rundir_spells_a_run_file_name():
    names = ("run.json", "generations.jsonl", GRADE_SAMPLES, SUMMARY, "grades-of.json")
    found = []
    for path in (ROOT / "harness").rglob("*.py"):
        if path.name in ("rundir.py",):
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if any(f'"{n}"' in line or f"'{n}'" in line for n in names):
                found.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert not found, "\n".join(found)
