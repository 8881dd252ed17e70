"""Regrading a saved run with the LLM judge beside the rules judge, then comparing the two."""
import json
import re

import pytest

from harness.cli import main
from tasks import get_task
from tests.judges_llm.helpers import JUDGE_MODEL, fenced_response, verdict_json
from tests.judges_llm.runs import make_run, snapshot
from tests.support.scripted_server import Reply, ScriptedServer

AIME = get_task("aime")
ANSWERS = {it.id: it.fields["answer"] for it in AIME.load(AIME.demo_data_path)}
IDS = sorted(ANSWERS)


def aime_answer(request):
    item_id, sample = request.request_id.split("#")
    answer = int(ANSWERS[item_id])
    if item_id == IDS[0]:
        return f"My working gives {answer}, if I have not slipped."  # hedged for the rules judge; a reader sees one
    if item_id == IDS[1] and sample == "1":
        return f"The answer is \\boxed{{{answer + 1}}}."
    return f"Therefore the answer is \\boxed{{{answer}}}."


def last_number_judge(body):
    """A judge that reads the last number of the response, as a lenient human grader would."""
    user = body["messages"][-1]["content"]
    reference = re.search(r"<reference-[0-9a-z]+>\n(.*?)\n</reference-", user, re.S).group(1)
    numbers = re.findall(r"\d+", fenced_response(body)[1])
    extracted = numbers[-1] if numbers else "None"
    return Reply(text=verdict_json(extracted, "yes" if numbers and int(extracted) == int(reference) else "no"))


@pytest.fixture
def graded_run(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = make_run(tmp_path / "aime-run", "aime", aime_answer, samples=2)
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    return run


def llm_grade(run, server):
    return main(["grade", str(run), "--judge", "llm", "--judge-model", JUDGE_MODEL,
                 "--judge-base-url", server.base_url, "--no-progress"])


def test_llm_regrade_leaves_rules_verdicts_byte_identical(graded_run):
    rules_dir = graded_run / "grades" / "rules-v11"
    before, generations = snapshot(rules_dir), (graded_run / "generations.jsonl").read_bytes()
    with ScriptedServer(last_number_judge, model=JUDGE_MODEL) as server:
        assert llm_grade(graded_run, server) == 0
        first_requests = len(server.requests)
        assert llm_grade(graded_run, server) == 0  # regrade: every verdict comes from the cache
        assert len(server.requests) == first_requests == 2 * len(IDS)
    assert snapshot(rules_dir) == before and (graded_run / "generations.jsonl").read_bytes() == generations
    llm_dirs = [p for p in (graded_run / "grades").iterdir() if p.name.startswith("llm-")]
    assert len(llm_dirs) == 1
    summary = json.loads((llm_dirs[0] / "summary.json").read_text())
    assert summary["judge"]["id"] == llm_dirs[0].name and summary["coverage_complete"] is True
    assert summary["pass@1"] == pytest.approx(1 - 1 / (2 * len(IDS)))
    assert "OPENAI_API_KEY" == summary["judge"]["config"]["api_key_env"]


def test_compare_lists_agreement_and_disagreements(graded_run, capsys):
    with ScriptedServer(last_number_judge, model=JUDGE_MODEL) as server:
        assert llm_grade(graded_run, server) == 0
    capsys.readouterr()
    assert main(["compare", str(graded_run)]) == 0
    table = capsys.readouterr().out
    n = 2 * len(IDS)
    assert f"agreement {100 * (n - 2) / n:.1f}% ({n - 2} of {n} samples both decided; 2 disagree" in table
    assert IDS[0] in table and "rules-v11" in table

    assert main(["compare", str(graded_run), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [pair] = report["pairs"]
    [llm_id] = [j for j in pair["judges"] if j.startswith("llm-judge-model-")]
    [rules_id] = [j for j in pair["judges"] if j == "rules-v11"]
    assert {(d["item_id"], d["sample"]) for d in pair["disagreements"]} == {(IDS[0], 0), (IDS[0], 1)}
    d = pair["disagreements"][0]
    assert d[rules_id] == {"correct": False, "status": "no_answer", "extracted": None}
    assert d[llm_id]["correct"] is True and int(d[llm_id]["extracted"]) == int(ANSWERS[IDS[0]])


def test_compare_needs_two_judges(graded_run, capsys):
    assert main(["compare", str(graded_run)]) == 2
    assert "needs two judges" in capsys.readouterr().err
    assert main(["compare", str(graded_run), "--judges", "rules-v11", "llm-nope"]) == 2
