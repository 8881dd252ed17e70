"""`summary`: percent with one decimal, JSON numbers, model/engine/samples columns, --by category, skipped paths."""
import json

import pytest

from harness.cli import main
from tasks import get_task
from tests.judges_llm.runs import make_run

GPQA = get_task("gpqa")


def only_summary(run):
    [folder] = (run / "grades").iterdir()
    return json.loads((folder / "summary.json").read_text())


@pytest.fixture
def gpqa_run(tmp_path):
    # always answers A: right exactly where the shuffled gold letter is A
    run = make_run(tmp_path / "gpqa-run", "gpqa", lambda r: "Answer: A", samples=2)
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    return run


def test_table_and_json_agree_and_use_one_unit(gpqa_run, tmp_path, capsys):
    summary = only_summary(gpqa_run)
    capsys.readouterr()
    assert main(["summary", str(gpqa_run), str(tmp_path / "not-a-run"), "--json"]) == 0
    out = capsys.readouterr()
    [row] = json.loads(out.out)
    assert "skipped" in out.err and "not-a-run" in out.err
    assert row["pass@1"] == summary["pass@1"] and isinstance(row["pass@1_stderr"], float)
    assert (row["model"], row["engine"], row["samples_per_item"]) == ("scripted-model", "scripted", 2)
    assert main(["summary", str(tmp_path / "not-a-run"), str(gpqa_run)]) == 0
    table = capsys.readouterr().out
    # the same interval as the report: the half-width of the 95% CI, and the heading says so
    assert f"{100 * summary['pass@1']:.1f}% ± {100 * 1.96 * summary['pass@1_stderr']:.1f}%" in table
    assert "pass@1 ± 95% CI" in table.splitlines()[0]
    assert "scripted-model" in table and "scripted " in table


def test_by_category_prints_one_row_per_category(gpqa_run, capsys):
    summary = only_summary(gpqa_run)
    capsys.readouterr()
    assert main(["summary", str(gpqa_run), "--by", "category"]) == 0
    lines = capsys.readouterr().out.splitlines()[2:]
    assert len(lines) == len(summary["per_category"]) >= 2
    for line, (cat, v) in zip(lines, sorted(summary["per_category"].items())):
        assert cat in line and f"{100 * v['pass@1']:.1f}%" in line


def test_no_run_at_all_is_an_error(tmp_path, capsys):
    assert main(["summary", str(tmp_path)]) == 2
    assert "no run directory" in capsys.readouterr().err


def test_by_category_shows_each_categorys_own_coverage(tmp_path, capsys):
    run = make_run(tmp_path / "gpqa-run", "gpqa", lambda r: "Answer: A", samples=2)
    gens = run / "generations.jsonl"
    records = [json.loads(line) for line in gens.read_text().splitlines()]
    lost = records[0]["category"]
    kept = [r for r in records if not (r["item_id"] == records[0]["item_id"] and r["sample"] == 1)]
    gens.write_text("".join(json.dumps(r) + "\n" for r in kept))  # one sample of one item never generated
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 3
    capsys.readouterr()
    assert main(["summary", str(run), "--by", "category", "--json"]) == 0
    rows = {r["category"]: r for r in json.loads(capsys.readouterr().out)}
    items_of = {c: {r["item_id"] for r in records if r["category"] == c} for c in rows}
    for cat, row in rows.items():
        expected = 2 * len(items_of[cat])
        assert row["expected"] == expected
        assert row["completed"] == expected - (cat == lost) and row["coverage_complete"] is (cat != lost)
    assert main(["summary", str(run), "--by", "category"]) == 0
    table = capsys.readouterr().out
    assert [lost in line for line in table.splitlines()[2:2 + len(rows)] if "NOT VALID" in line] == [True]
