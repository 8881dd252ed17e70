"""HLE through the real generate and grade stages: LLM verdicts, accuracy, interval, calibration, subsets."""
import json
import re

import pytest

from harness.cli import main
from tasks import get_task
from tests.judges_llm.helpers import JUDGE_MODEL, honest_judge
from tests.judges_llm.runs import make_run
from tests.support.scripted_server import Reply, ScriptedServer

HLE = get_task("hle")
ITEMS = {it.id: it for it in HLE.load(HLE.demo_data_path)}
WRONG = sorted(ITEMS)[:2]  # the model gets these two wrong


def hle_answer(request):
    item = ITEMS[request.request_id.split("#")[0]]
    answer = "nothing" if item.id in WRONG else item.fields["answer"]
    return f"Explanation: worked it out.\nAnswer: {answer}\nConfidence: {60 if item.id in WRONG else 90}%"


def grade_llm(run, server, *extra):
    return main(["grade", str(run), "--judge", "llm", "--judge-model", JUDGE_MODEL,
                 "--judge-base-url", server.base_url, "--no-progress", *extra])


def summary_of(run):
    [folder] = [p for p in (run / "grades").iterdir() if p.name.startswith("llm-")]
    return json.loads((folder / "summary.json").read_text()), folder


def test_hle_demo_graded_by_llm_judge(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = make_run(tmp_path / "hle", "hle", hle_answer)
    records = [json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()]
    image_records = [r for r in records if r["meta"]["has_image"]]
    assert image_records and image_records[0]["messages"][-1]["content"][1]["type"] == "image_url"

    with ScriptedServer(honest_judge, model=JUDGE_MODEL) as server:
        assert grade_llm(run, server) == 0
        judge_bodies = server.requests
    assert len(judge_bodies) == len(ITEMS)
    assert all(isinstance(b["messages"][-1]["content"], str) for b in judge_bodies)  # images noted, not sent

    s, folder = summary_of(run)
    n = len(ITEMS)
    assert s["task"] == "hle" and s["subset"] == "all" and s["coverage_complete"] is True
    assert s["accuracy"] == round(100 * (n - 2) / n, 2) and s["accuracy_n"] == n
    assert s["accuracy_ci95_half_width"] > 0
    assert s["calibration_error"] is None and "at least 100" in s["calibration_not_computable"]
    assert set(s["breakdowns"]) == {"category", "answer_type", "modality"}
    assert s["breakdowns"]["modality"]["image"]["n"] == len(image_records)
    grades = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    assert {g["detail"]["confidence"] for g in grades} == {60, 90}


def test_engine_without_images_records_generation_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = make_run(tmp_path / "hle", "hle", hle_answer, supports_images=False)
    records = [json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()]
    errors = [r for r in records if r["finish_reason"] == "error"]
    assert len(records) == len(ITEMS) and errors and all("image" in r["error"] for r in errors)
    with ScriptedServer(honest_judge, model=JUDGE_MODEL) as server:
        assert grade_llm(run, server) == 3  # coverage incomplete
    s, _ = summary_of(run)
    assert s["coverage_complete"] is False and s["counts"]["generation_error"] == len(errors)
    assert s["accuracy"] == round(100 * (len(ITEMS) - 2 - len(errors)) / len(ITEMS), 2)  # errors count as wrong


def test_image_subset_is_recorded_in_run_and_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = make_run(tmp_path / "hle-img", "hle", hle_answer, subset="image")
    spec = json.loads((run / "run.json").read_text())
    assert spec["task_options"] == {"subset": "image", "prompt": "official"} and len(spec["item_ids"]) == 2
    with ScriptedServer(honest_judge, model=JUDGE_MODEL) as server:
        assert grade_llm(run, server) == 0
    s, _ = summary_of(run)
    assert s["subset"] == "image" and s["task_options"] == {"subset": "image", "prompt": "official"}
    assert set(s["breakdowns"]["modality"]) == {"image"}


def test_persistent_judge_failure_then_rerun_retries_only_those(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = make_run(tmp_path / "hle", "hle", hle_answer)
    target = sorted(ITEMS)[3]

    def broken_for_one(body):
        if ITEMS[target].fields["question"] in body["messages"][-1]["content"]:
            return Reply(status=500)
        return honest_judge(body)

    with ScriptedServer(broken_for_one, model=JUDGE_MODEL) as server:
        # the grade CLI has no retry-delay flag: skip the backoff sleeps so the test stays fast
        monkeypatch.setattr("engine.openai.backend.backoff_delay", lambda *args, **kwargs: 0.0)  # the judge's engine
        assert grade_llm(run, server) == 3
        s, _ = summary_of(run)
        assert s["counts"]["judge_error"] == 1 and s["coverage_complete"] is False
        server.set_handler(honest_judge)
        server.reset()
        assert grade_llm(run, server) == 0
        assert len(server.requests) == 1 and ITEMS[target].fields["question"] in server.requests[0]["messages"][-1]["content"]
    s, _ = summary_of(run)
    assert s["coverage_complete"] is True and s["counts"]["judge_error"] == 0


def test_generate_hle_over_http_sends_image_parts(tmp_path):
    pytest.importorskip("engine.openai.backend", reason="the openai backend is not in this tree")
    def model(body):
        content = body["messages"][-1]["content"]
        question = content if isinstance(content, str) else content[0]["text"]
        item = next(it for it in ITEMS.values() if it.fields["question"] == question)
        return Reply(text=f"Answer: {item.fields['answer']}\nConfidence: 80%")

    with ScriptedServer(model) as server:
        assert main(["generate", "--task", "hle", "--engine", "openai", "--base-url", server.base_url,
                     "--model", "test-model", "--out", str(tmp_path / "run"), "--no-progress"]) == 0
        with_images = [b for b in server.requests if isinstance(b["messages"][-1]["content"], list)]
    assert len(with_images) == sum(it.fields["has_image"] for it in ITEMS.values())
    assert all(re.match(r"data:image/png;base64,", b["messages"][-1]["content"][1]["image_url"]["url"])
               for b in with_images)


def test_calibration_error_reaches_summary_for_250_questions(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    data = tmp_path / "hle.jsonl"
    data.write_text("".join(json.dumps({"id": f"s{i:03d}", "question": f"Question {i}?", "answer": str(i),
                                        "answer_type": "exactMatch", "category": "Math"}) + "\n" for i in range(250)))
    run = make_run(tmp_path / "hle-250", "hle", lambda request: "Answer: wrong\nConfidence: 100%", data=data)
    with ScriptedServer(honest_judge, model=JUDGE_MODEL) as server:
        assert grade_llm(run, server, "--judge-concurrency", "64") == 0
    s, _ = summary_of(run)
    assert (s["accuracy"], s["accuracy_ci95_half_width"]) == (0.0, 0.0)
    assert (s["calibration_error"], s["calibration_error_corrected"], s["calibration_samples"]) == (63.0, 100.0, 250)
