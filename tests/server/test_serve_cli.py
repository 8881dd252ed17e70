"""`python -m harness serve` as a user runs it: generate --engine openai against it, then grade the run."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _harness(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def served():
    env = {**os.environ, "SERVE_TEST_KEY": "k-123"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "serve", "--port", "0", "--threads", "1", "--kv-cache-gib", "0.25",
         "--max-model-len", "2048", "--api-key-env", "SERVE_TEST_KEY", "--log-level", "warning"],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    url = None
    deadline = time.monotonic() + 90
    lines = []
    while url is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"on (http://\S+/v1)", line)
        url = m.group(1) if m else None
    if url is None:
        proc.kill()
        rest = proc.stderr.read()
        pytest.fail(f"serve did not announce its URL (exit {proc.wait()}):\n{''.join(lines)}{rest}")
    try:
        yield url
    finally:
        proc.terminate()  # SIGTERM: a graceful shutdown, the engine is closed, and the exit status is 0
        try:
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_generate_with_the_openai_engine_against_serve_makes_a_run_that_grades(served, tmp_path):
    assert httpx.get(served.removesuffix("/v1") + "/health").json()["status"] == "ok"
    out = tmp_path / "aime-served"
    gen = _harness("generate", "--task", "aime", "--engine", "openai", "--base-url", served, "--model", "smollm2-135m",
                   "--api-key-env", "SERVE_TEST_KEY", "--limit", "2", "--samples", "1", "--max-tokens", "16",
                   "--concurrency", "2", "--max-retries", "0", "--out", str(out), "--no-progress",
                   env={"SERVE_TEST_KEY": "k-123"})
    assert gen.returncode == 0, gen.stderr
    records = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert all(r["finish_reason"] in ("stop", "length") and r["response"] for r in records)
    assert all(r["usage"]["completion_tokens"] <= 16 and r["usage"]["prompt_tokens"] > 0 for r in records)
    grade = _harness("grade", str(out), "--judge", "rules")
    assert grade.returncode == 0, grade.stderr
    summaries = list((out / "grades").glob("*/summary.json"))
    assert len(summaries) == 1
    summary = json.loads(summaries[0].read_text())
    assert summary["counts"]["expected"] == 2 and summary["coverage_complete"] is True


def test_the_served_engine_refuses_a_client_without_the_key(served):
    r = httpx.post(served + "/chat/completions", json={"model": "smollm2-135m", "messages": [
        {"role": "user", "content": "hi"}]})
    assert r.status_code == 401


def test_binding_a_public_address_without_a_key_warns():
    # A model that does not exist stops the command right after the warning, before anything is bound.
    r = _harness("serve", "--host", "0.0.0.0", "--model", "/nonexistent/model.gguf", timeout=60)
    assert "warning: binding 0.0.0.0 without an API key" in r.stderr
    assert r.returncode == 2 and "error:" in r.stderr


@pytest.mark.parametrize("flag,value", [("--max-seqs-per-request", "0"), ("--body-timeout-s", "0"),
                                        ("--shutdown-grace-s", "-1")])
def test_bad_limit_settings_are_a_clear_error_before_the_model_loads(flag, value):
    r = _harness("serve", flag, value, "--model", "/nonexistent/model.gguf", timeout=60)
    assert r.returncode == 2 and flag in r.stderr and "Traceback" not in r.stderr
    assert "nonexistent" not in r.stderr  # refused before the model was looked up


def test_an_unset_key_variable_is_a_clear_error():
    r = _harness("serve", "--api-key-env", "SURELY_UNSET_SERVE_KEY_VAR", env={"SURELY_UNSET_SERVE_KEY_VAR": ""})
    assert r.returncode == 2 and "SURELY_UNSET_SERVE_KEY_VAR" in r.stderr


def test_serve_rejects_out_of_range_numbers_with_an_argparse_error():
    for flag, value in (("--max-body-mb", "-1"), ("--max-body-mb", "inf"), ("--port", "70000"),
                        ("--max-connections-per-client", "0"), ("--header-timeout-s", "nan")):
        r = _harness("serve", flag, value, timeout=60)
        assert r.returncode == 2, (flag, value, r.stderr)
        assert f"argument {flag}" in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.slow  # starts the compiler process (seconds of imports)
def test_a_served_json_schema_compiles_in_the_compiler_process_and_is_cached(served):
    headers = {"Authorization": "Bearer k-123"}
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    body = {"model": "smollm2-135m", "messages": [{"role": "user", "content": "Is water wet? Answer as JSON."}],
            "max_tokens": 12, "temperature": 0,
            "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}}
    for _ in range(2):
        r = httpx.post(served + "/chat/completions", json=body, headers=headers, timeout=180)
        assert r.status_code == 200, r.text
        if r.json()["choices"][0]["finish_reason"] == "stop":
            assert isinstance(json.loads(r.json()["choices"][0]["message"]["content"])["ok"], bool)
    metrics = httpx.get(served.removesuffix("/v1") + "/metrics", timeout=30).text
    assert 'harness_grammar_requests_total{result="compiled"} 1' in metrics
    assert 'harness_grammar_requests_total{result="cached"} 1' in metrics
