"""generate -> grade -> summary end to end through the CLI, the real openai client and a real local server."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from tasks import get_task
from tests.support.scripted_server import Reply, ScriptedServer, fail_then, unused_url

REPO = Path(__file__).resolve().parents[2]
AIME_ANSWERS = {it.fields["problem"]: it.fields["answer"] for it in get_task("aime").load(get_task("aime").demo_data_path)}


def aime_oracle(wrong_ids=()):
    """Answers each demo problem correctly (with a distractor boxed value first), or wrongly for some."""
    def handler(body):
        prompt = body["messages"][-1]["content"]
        problem = prompt.split("\n\n", 1)[1]
        answer = AIME_ANSWERS[problem]
        if any(problem == get_task("aime").load(get_task("aime").demo_data_path)[i].fields["problem"] for i in wrong_ids):
            answer = str(int(answer) + 1)
        return Reply(text=f"First try gives \\boxed{{999}}, but wait, that is wrong.\nSo the answer is \\boxed{{{int(answer)}}}.")
    return handler


def gpqa_oracle(body):
    prompt = body["messages"][-1]["content"]
    task = get_task("gpqa")
    for item in task.load(task.demo_data_path):
        if item.fields["question"] in prompt:
            correct = item.fields["answers"][0]
            letter = next(line[0] for line in prompt.splitlines() if line[2:].strip() == correct and line[1] == ")")
            return Reply(text=f"The options suggest (A) at first, but checking again...\n\n**Answer: {letter}**")
    return Reply(text="no idea")


def generate_args(server_url, out, *extra, task="aime"):
    return ["generate", "--task", task, "--engine", "openai", "--base-url", server_url, "--model", "test-model",
            "--out", str(out), "--no-progress", "--retry-base-delay", "0.01", "--max-retries", "2", *extra]


def read_lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_aime_end_to_end_scores_last_committed_answer(tmp_path, capsys):
    out = tmp_path / "run"
    with ScriptedServer(aime_oracle(wrong_ids=(0,))) as server:
        assert main(generate_args(server.base_url, out, "--samples", "3")) == 0
    records = read_lines(out / "generations.jsonl")
    assert len(records) == 8 * 3 and {r["finish_reason"] for r in records} == {"stop"}
    spec = json.loads((out / "run.json").read_text())
    assert spec["dataset_sha256"] and spec["samples"] == 3 and spec["engine"]["name"] == "openai"
    assert "api_key" not in json.dumps(spec).lower()

    assert main(["grade", str(out), "--judge", "rules", "--no-progress"]) == 0
    summary = json.loads((out / "grades" / "rules-v11" / "summary.json").read_text())
    assert summary["coverage_complete"] is True
    assert summary["pass@1"] == pytest.approx(7 / 8)
    assert summary["counts"]["graded"] == 24
    assert summary["per_item"]["demo-01"]["pass@1"] == 0.0
    grades = read_lines(out / "grades" / "rules-v11" / "samples.jsonl")
    assert len(grades) == 24 and {g["extracted"] for g in grades if g["item_id"] == "demo-02"} == {"24"}

    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    table = capsys.readouterr().out
    assert "rules-v11" in table and "87.5" in table and "NOT VALID" not in table


def test_gpqa_end_to_end_uses_stored_permutation(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(gpqa_oracle) as server:
        assert main(generate_args(server.base_url, out, "--samples", "4", task="gpqa")) == 0
    assert main(["grade", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "grades" / "rules-v11" / "summary.json").read_text())
    assert summary["pass@1"] == 1.0 and summary["coverage_complete"]
    assert set(summary["per_category"]) == {"Biology", "Chemistry", "Physics"}
    letters = {r["target"] for r in read_lines(out / "generations.jsonl")}
    assert len(letters) > 1


def test_faults_are_retried_then_counted_never_scored(tmp_path, capsys):
    out = tmp_path / "run"
    problem_1 = get_task("aime").load(get_task("aime").demo_data_path)[0].fields["problem"]
    oracle = aime_oracle()

    def flaky(body):
        if problem_1 in body["messages"][-1]["content"]:
            return Reply(status=500)
        return oracle(body)

    with ScriptedServer(fail_then(1, 429, then=flaky)) as server:
        assert main(generate_args(server.base_url, out, "--samples", "2")) == 3
        records = read_lines(out / "generations.jsonl")
        errors = [r for r in records if r["finish_reason"] == "error"]
        assert len(errors) == 2 and all(r["response"] == "" and "500" in r["error"] for r in errors)
        # each distinct prompt got one 429 first (both samples of an item share a prompt): retried, then fine
        assert sorted(r["attempts"] for r in records if r["finish_reason"] == "stop") == [1] * 7 + [2] * 7

        assert main(["grade", str(out), "--no-progress"]) == 3
        summary = json.loads((out / "grades" / "rules-v11" / "summary.json").read_text())
        assert summary["coverage_complete"] is False and summary["counts"]["generation_error"] == 2
        assert summary["pass@1"] == pytest.approx(7 / 8)  # failed samples count as wrong, never as answers
        capsys.readouterr()
        main(["summary", str(out)])
        assert "NOT VALID" in capsys.readouterr().out

        # the server recovers: a rerun retries only the two failed requests
        server.set_handler(oracle)
        before = len(server.requests)
        assert main(generate_args(server.base_url, out, "--samples", "2")) == 0
        assert len(server.requests) - before == 2
    records = read_lines(out / "generations.jsonl")
    assert len(records) == 16 and len({(r["item_id"], r["sample"]) for r in records}) == 16
    assert main(["grade", str(out), "--no-progress"]) == 0
    assert json.loads((out / "grades" / "rules-v11" / "summary.json").read_text())["pass@1"] == 1.0


def test_malformed_replies_are_retried_then_recorded_as_errors(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(Reply(raw_body="{not json", status=200)) as server:
        assert main(generate_args(server.base_url, out, "--samples", "1", "--limit", "2")) == 3
        assert len(server.requests) >= 2 * 3  # the first try plus two retries each
    records = read_lines(out / "generations.jsonl")
    assert len(records) == 2 and all(r["finish_reason"] == "error" and r["response"] == "" for r in records)


def test_server_down_at_start_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(generate_args(unused_url(), out)) == 2
    err = capsys.readouterr().err
    assert "cannot reach" in err and "127.0.0.1" in err
    assert not (out / "run.json").exists() and not (out / "generations.jsonl").exists()


def test_rerun_with_different_settings_is_refused_then_forced(tmp_path, capsys):
    out = tmp_path / "run"
    with ScriptedServer(aime_oracle()) as server:
        assert main(generate_args(server.base_url, out, "--samples", "1", "--limit", "2")) == 0
        capsys.readouterr()
        assert main(generate_args(server.base_url, out, "--samples", "1", "--limit", "2", "--temperature", "0.1")) == 2
        err = capsys.readouterr().err
        assert "temperature" in err and "--force" in err
        assert main(generate_args(server.base_url, out, "--samples", "1", "--limit", "2", "--temperature", "0.1",
                                  "--force")) == 0
    assert list(out.glob("superseded-*/generations.jsonl"))
    assert json.loads((out / "run.json").read_text())["sampling"]["temperature"] == 0.1


@pytest.mark.parametrize("args,valid", [
    (["generate", "--task", "mmlu", "--out", "x"], "valid tasks: aime, gpqa, hle"),
    (["generate", "--task", "aime", "--engine", "tgi", "--out", "x"], "valid engines: native, openai"),
    (["grade", "x", "--judge", "vibes"], "valid judges: llm, rules"),
])
def test_unknown_names_list_the_valid_ones(args, valid, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert valid in capsys.readouterr().err


def test_sigkill_mid_run_then_resume_gives_each_pair_exactly_once(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(Reply(text="\\boxed{1}", delay_s=0.02)) as server:
        cmd = [sys.executable, "-m", "harness", *generate_args(server.base_url, out, "--samples", "16", "--concurrency", "4")]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        gen = out / "generations.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not gen.exists() or gen.stat().st_size < 20_000):
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with open(gen, "a") as f:
            f.write('{"task": "aime", "item_id": "demo-0')  # as if killed in the middle of a write
        done_before = len(Path(gen).read_text().splitlines()) - 1
        assert 0 < done_before < 128
        assert subprocess.run(cmd, cwd=REPO, env=env, capture_output=True).returncode == 0
    records = read_lines(gen)
    keys = [(r["item_id"], r["sample"]) for r in records]
    assert len(keys) == 128 and len(set(keys)) == 128
