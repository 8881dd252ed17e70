"""Run-directory locks: one generate per run, one grade per (run, judge), stale locks taken over."""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.jsonl import write_json_atomic
from harness.locks import LockHeld, RunLock, read_holder
from tests.judges_llm.helpers import JUDGE_MODEL, verdict_json
from tests.support.scripted_server import Reply, ScriptedServer

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def harness_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def generate_args(url: str, out: Path, *extra: str) -> list[str]:
    return ["generate", "--task", "aime", "--engine", "openai", "--base-url", url, "--model", "test-model",
            "--out", str(out), "--no-progress", "--max-retries", "0", *extra]


def wait_for(predicate, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Gate:
    """Replies slowly until opened, so a first process is surely still running while the test probes it."""

    def __init__(self, reply: Reply, slow_s: float = 0.5):
        self.reply, self.slow_s, self.open = reply, slow_s, threading.Event()

    def __call__(self, body: dict) -> Reply:
        delay = 0.0 if self.open.is_set() else self.slow_s
        return Reply(text=self.reply.text, delay_s=delay)


def read_started(message: str) -> str:
    return message.split("(started ", 1)[1].split(")", 1)[0]


def keys_of(path: Path) -> list[tuple[str, int]]:
    return [(r["item_id"], r["sample"]) for r in map(json.loads, path.read_text().splitlines())]


# -- the lock itself ---------------------------------------------------------------------------------

def test_second_holder_is_refused_with_pid_and_host_then_lock_is_free_after_release(tmp_path):
    path = tmp_path / ".lock"
    first = RunLock(path, "generate into x").acquire()
    holder = read_holder(path)
    assert (holder.pid, holder.host) == (os.getpid(), socket.gethostname())
    with pytest.raises(LockHeld) as info:
        RunLock(path, "generate into x").acquire()
    message = str(info.value)
    assert f"pid {os.getpid()}" in message and socket.gethostname() in message and "already running" in message
    first.release()
    assert not path.exists()  # a clean release leaves nothing behind
    with RunLock(path, "generate into x") as again:
        assert again.took_over is None


def test_lock_of_a_killed_process_is_taken_over(tmp_path):
    path = tmp_path / ".lock"
    code = ("import os, signal, sys; from harness.locks import RunLock; "
            f"RunLock({str(path)!r}, 'generate').acquire(); print('held', flush=True); "
            "os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL and "held" in proc.stdout
    dead = read_holder(path)
    assert dead is not None and dead.host == socket.gethostname()  # the file outlived its process
    with RunLock(path, "generate") as lock:
        assert lock.took_over is not None and lock.took_over.pid == dead.pid
        assert read_holder(path).pid == os.getpid()


def test_lock_file_from_another_host_is_refused_with_what_to_delete(tmp_path):
    path = tmp_path / ".lock"
    path.write_text(json.dumps({"pid": 4242, "host": "gpu-node-7", "started_at": "2026-12-01T10:00:00Z"}))
    with pytest.raises(LockHeld) as info:
        RunLock(path, "generate into x").acquire()
    message = str(info.value)
    assert "pid 4242 on host gpu-node-7" in message and f"delete {path}" in message
    assert json.loads(path.read_text())["host"] == "gpu-node-7"  # the other host's record is left alone


def test_concurrent_atomic_writes_of_one_file_never_collide(tmp_path):
    target = tmp_path / "summary.json"
    failures: list[BaseException] = []

    def writer(tag: int) -> None:
        try:
            for i in range(150):
                write_json_atomic(target, {"writer": tag, "i": i})
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert json.loads(target.read_text())["i"] == 149
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]  # no temp file left behind


# -- two real generate processes on one --out -------------------------------------------------------

def test_second_generate_on_the_same_out_is_refused_and_nothing_is_lost(tmp_path):
    out = tmp_path / "run"
    gate = Gate(Reply(text="\\boxed{1}"))
    with ScriptedServer(gate) as server:
        args = generate_args(server.base_url, out, "--samples", "3", "--limit", "4", "--concurrency", "1")
        first = subprocess.Popen(harness_cmd(*args), cwd=REPO, env=ENV, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: (out / "generations.jsonl").exists() and (out / "generations.jsonl").stat().st_size,
                     "the first generate to write a record")
            second = subprocess.run(harness_cmd(*args), cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120)
            grade_status = main(["grade", str(out), "--no-progress"])  # reading beside the writer is allowed
            still_running = first.poll() is None
            gate.open.set()
            first_out, first_err = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
        probes = [r for r in server.log if r.method == "GET"]
        posts = server.requests
    assert still_running, "the first generate finished before the second started"
    assert second.returncode == 2, second.stderr
    assert f"pid {first.pid} on host {socket.gethostname()}" in second.stderr and "Traceback" not in second.stderr
    assert [line for line in second.stderr.splitlines() if not line.startswith("note:")] == [
        f"error: generate into {out} is already running: pid {first.pid} on host {socket.gethostname()} "
        f"(started {read_started(second.stderr)}); wait for it to finish (or stop it), then rerun"]
    assert first.returncode == 0, first_err
    keys = keys_of(out / "generations.jsonl")
    assert len(keys) == 12 and len(set(keys)) == 12  # every (item, sample) exactly once
    assert len(posts) == 12 and len(probes) == 1  # the refused process never built its engine
    assert not (out / ".lock").exists()
    assert grade_status == 3  # graded what was finished: coverage incomplete, and the note says why
    note = json.loads((out / "grades" / "rules-v11" / "summary.json").read_text())["note"]
    assert f"generate is still writing this run (pid {first.pid} on host {socket.gethostname()}" in note


# -- grade: one per (run, judge), other judges alongside ----------------------------------------------

def test_same_judge_twice_is_refused_cleanly_while_another_judge_grades_alongside(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(Reply(text="\\boxed{1}")) as server:
        assert main(generate_args(server.base_url, out, "--samples", "2", "--limit", "4")) == 0
    gate = Gate(Reply(text=verdict_json("1", "yes")), slow_s=3.0)  # two CLI starts must fit, even on a loaded machine
    with ScriptedServer(gate, model=JUDGE_MODEL) as judge:
        llm = ["grade", str(out), "--judge", "llm", "--judge-model", JUDGE_MODEL, "--judge-base-url",
               judge.base_url, "--judge-concurrency", "1", "--judge-no-cache", "--no-progress"]
        first = subprocess.Popen(harness_cmd(*llm), cwd=REPO, env=ENV, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: judge.requests, "the first grade to ask its judge")
            same = subprocess.run(harness_cmd(*llm), cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120)
            other = subprocess.run(harness_cmd("grade", str(out), "--judge", "rules", "--no-progress"), cwd=REPO,
                                   env=ENV, capture_output=True, text=True, timeout=120)
            still_running = first.poll() is None
            gate.open.set()
            first_out, first_err = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
    assert still_running, "the first grade finished too soon to test anything"
    assert same.returncode == 2 and "Traceback" not in same.stderr, same.stderr
    assert f"pid {first.pid}" in same.stderr and "already running" in same.stderr
    assert other.returncode == 0, other.stderr
    assert first.returncode == 0, first_err
    [llm_summary] = out.glob("grades/llm-*/summary.json")
    assert json.loads(llm_summary.read_text())["counts"]["graded"] == 8
    assert json.loads((out / "grades" / "rules-v11" / "summary.json").read_text())["counts"]["graded"] == 8
    assert not list(out.glob("grades/*/.lock")) and not list(out.glob("grades/*/*.tmp"))
