"""The report's files without a browser: escaping, paging, what the CLI skips."""
from __future__ import annotations

import json
import re

import pytest

from harness.cli import main
from harness.report import samples
from harness.rundir import RunDir
from tests.judges_llm.runs import make_run
from tests.report.fixtures import INJECTED, aime_answer_a


@pytest.fixture
def run(tmp_path):
    path = make_run(tmp_path / "runs" / "<b>odd name", "aime", aime_answer_a, samples=2)
    assert main(["grade", str(path), "--judge", "rules", "--no-progress"]) == 0
    return path


def load_js_call(path, fn):
    """Arguments of the HR.<fn>(...) call a data file makes, parsed back as JSON."""
    text = path.read_text()
    assert text.startswith(f"HR.{fn}(") and text.endswith(");\n")
    return json.loads("[" + text[len(f"HR.{fn}("):-3] + "]")


def test_data_files_carry_responses_escaped_and_paged(run, tmp_path, monkeypatch):
    monkeypatch.setattr(samples, "PAGE_SIZE", 5)
    out = tmp_path / "out"
    assert main(["report", str(run), "-o", str(out)]) == 0
    data = sorted((out / "data").iterdir())
    assert [p.name for p in data] == ["r0-index.js"] + [f"r0-p{i:04d}.js" for i in range(4)]  # 16 samples / 5
    for p in data:
        assert not re.search(r"[<>&\u2028\u2029]", p.read_text())  # nothing a parser could take for markup
    _, meta, rows = load_js_call(out / "data" / "r0-index.js", "index")
    assert meta["judges"] == RunDir(run).list_judges() and len(meta["judges"]) == 1 and len(rows) == 16
    records = [r for p in data[1:] for r in load_js_call(p, "page")[2]]
    assert [(r["item"], r["sample"]) for r in records] == [(row[0], row[1]) for row in rows]
    assert any(INJECTED in r["response"] for r in records)  # the exact text survives the round trip
    html = (out / "index.html").read_text()
    assert "&lt;b&gt;odd name" in html and "<b>odd name" not in html  # jinja2 autoescape
    assert "cdn" not in html.lower() and "http://" not in html and "https://" not in html


def test_paths_that_are_not_runs_are_skipped_with_a_warning(run, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", str(run.parent), str(tmp_path / "nothing-here"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "nothing-here" in err
    assert (out / "index.html").exists() and (out / "report.js").exists()
    assert main(["report", str(tmp_path / "nothing-here"), "-o", str(out)]) == 2
