"""Graders only read generations.jsonl: a torn tail is skipped in memory, and a read-only run grades."""
import builtins
import hashlib
import io
import json
import os
from pathlib import Path

import pytest

from harness.cli import main
from tests.harness.read_only import can_make_read_only, run_harness_read_only
from tests.judges_llm.helpers import JUDGE_MODEL, verdict_json
from tests.support.scripted_server import Reply, ScriptedServer

TORN = '{"task": "aime", "item_id": "demo-08", "sample": 0, "messages": [{"role": "us'


def make_run(out: Path, limit: int = 4) -> Path:
    with ScriptedServer(Reply(text="So the answer is \\boxed{1}.")) as server:
        assert main(["generate", "--task", "aime", "--engine", "openai", "--base-url", server.base_url, "--model",
                     "test-model", "--out", str(out), "--samples", "2", "--limit", str(limit), "--no-progress"]) == 0
    return out


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file's content hash and mtime (ns): any write, even one that restores the bytes, shows."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file() and "grades" not in p.parts}


class OpenSpy:
    """Records every open of a path named generations.jsonl with a mode or flags that could write it."""

    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_TRUNC | os.O_CREAT

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.writes: list[str] = []
        real_open, real_os_open = builtins.open, os.open

        def spy_open(file, mode="r", *args, **kwargs):
            if str(file).endswith("generations.jsonl") and any(c in mode for c in "wax+"):
                self.writes.append(f"open({file}, {mode!r})")
            return real_open(file, mode, *args, **kwargs)

        def spy_os_open(path, flags, *args, **kwargs):
            if str(path).endswith("generations.jsonl") and flags & self.WRITE_FLAGS:
                self.writes.append(f"os.open({path}, {flags:#o})")
            return real_os_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", spy_open)
        monkeypatch.setattr(io, "open", spy_open)
        monkeypatch.setattr(os, "open", spy_os_open)


def test_torn_last_line_is_skipped_in_memory_reported_and_left_in_place(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path / "run")
    gens = run / "generations.jsonl"
    with open(gens, "a") as f:
        f.write(TORN)  # a generate killed mid-write (or one still writing)
    lines = len(gens.read_text().splitlines())
    before = snapshot(run)
    spy = OpenSpy(monkeypatch)
    assert main(["grade", str(run), "--no-progress"]) == 0  # the torn record is not expected: coverage holds
    assert main(["summary", str(run)]) == 0
    monkeypatch.undo()
    assert spy.writes == [], spy.writes
    assert snapshot(run) == before and gens.read_text().endswith(TORN)
    summary = json.loads((run / "grades" / "rules-v11" / "summary.json").read_text())
    assert summary["counts"]["generated"] == 8 and summary["coverage_complete"] is True
    assert f"generations.jsonl:{lines}: unfinished last line skipped" in summary["note"]


def test_torn_record_of_an_expected_sample_counts_as_missing(tmp_path, capsys):
    run = make_run(tmp_path / "run")
    gens = run / "generations.jsonl"
    records = gens.read_text().splitlines()
    gens.write_text("\n".join(records[:-1]) + "\n" + records[-1][:50])  # the last sample's record torn
    before = snapshot(run)
    assert main(["grade", str(run), "--no-progress"]) == 3
    assert snapshot(run) == before
    summary = json.loads((run / "grades" / "rules-v11" / "summary.json").read_text())
    assert summary["counts"]["missing"] == 1 and summary["coverage_complete"] is False
    assert "coverage incomplete" in summary["note"] and "unfinished last line skipped" in summary["note"]
    assert "unfinished last line skipped" in capsys.readouterr().err


@pytest.mark.skipif(not can_make_read_only(), reason="cannot make a folder read-only for a child process here")
def test_read_only_run_grades_into_another_folder_and_is_never_written(tmp_path):
    run = make_run(tmp_path / "run")
    with open(run / "generations.jsonl", "a") as f:
        f.write(TORN)
    before = snapshot(run)

    refused = run_harness_read_only(run, "grade", str(run), "--no-progress")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    [error] = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert "cannot write to" in error and "--out DIR" in error

    elsewhere = tmp_path / "grades-of-run"
    with ScriptedServer(Reply(text=verdict_json("1", "yes")), model=JUDGE_MODEL) as judge:
        rules = run_harness_read_only(run, "grade", str(run), "--out", str(elsewhere), "--no-progress")
        llm = run_harness_read_only(run, "grade", str(run), "--out", str(elsewhere), "--judge", "llm",
                                    "--judge-model", JUDGE_MODEL, "--judge-base-url", judge.base_url, "--no-progress")
        summary_table = run_harness_read_only(run, "summary", str(run))
    assert rules.returncode == 0, rules.stderr
    assert llm.returncode == 0, llm.stderr
    assert summary_table.returncode == 0, summary_table.stderr
    assert snapshot(run) == before and not (run / "grades").exists()
    summary = json.loads((elsewhere / "grades" / "rules-v11" / "summary.json").read_text())
    assert summary["coverage_complete"] is True and summary["counts"]["graded"] == 8
    assert "unfinished last line skipped" in summary["note"]
    [llm_dir] = (elsewhere / "grades").glob("llm-*")
    assert json.loads((llm_dir / "summary.json").read_text())["counts"]["graded"] == 8
    assert (llm_dir / "cache.jsonl").exists()  # the judge's verdict cache follows the grades


def test_grade_out_takes_one_run_only(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "g")]) == 2
    assert "--out takes one run directory" in capsys.readouterr().err


def test_summary_compare_and_report_read_grades_written_elsewhere(tmp_path, capsys):
    run, other = make_run(tmp_path / "run"), make_run(tmp_path / "other")
    elsewhere = tmp_path / "grades-of-run"
    with ScriptedServer(Reply(text=verdict_json("2", "no")), model=JUDGE_MODEL) as judge:
        assert main(["grade", str(run), "--out", str(elsewhere), "--no-progress"]) == 0
        assert main(["grade", str(run), "--out", str(elsewhere), "--judge", "llm", "--judge-model", JUDGE_MODEL,
                     "--judge-base-url", judge.base_url, "--no-progress"]) == 0
    assert not (run / "grades").exists()
    capsys.readouterr()

    assert main(["summary", str(elsewhere), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["judge"].split("-")[0] for r in rows) == ["llm", "rules"]
    by_judge = {r["judge"].split("-")[0]: r for r in rows}
    assert by_judge["rules"]["pass@1"] == 0.0 and by_judge["rules"]["coverage_complete"] is True
    assert by_judge["rules"]["task"] == "aime" and by_judge["rules"]["expected"] == 8

    assert main(["compare", str(elsewhere), "--json"]) == 0  # one run, its two judges
    pair = json.loads(capsys.readouterr().out)["pairs"][0]
    assert pair["both_decided"] == 8 and pair["agree"] == 8  # both say wrong (target is not 1, verdict "no")

    assert main(["grade", str(other), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(elsewhere), str(other), "--judge", "rules-v11", "--json"]) == 0  # paired runs
    assert json.loads(capsys.readouterr().out)["items"] == 4

    report = tmp_path / "report"
    assert main(["report", str(elsewhere), "-o", str(report)]) == 0
    index = (report / "data" / "r0-index.js").read_text()
    assert "rules-v11" in index and "llm-" in index

    assert main(["grade", str(elsewhere), "--no-progress"]) == 0  # grading the folder again regrades the run
    assert not (run / "grades").exists()

    # the folder belongs to one run: grading another run into it is refused, nothing mixed
    assert main(["grade", str(other), "--out", str(elsewhere), "--no-progress"]) == 2
    assert "holds grades of the run" in capsys.readouterr().err
