"""Secrets in base URLs (`?key=...`, `user:password@`) reach the server and never a file, log or summary."""
import base64
import json
import logging
from pathlib import Path
from urllib.parse import parse_qs, quote

import pytest

from engine.base import EngineError
from engine.openai.backend import OpenAIEngine
from engine.openai.endpoints import split_base_url
from harness.cli import main
from tests.judges_llm.helpers import JUDGE_MODEL, verdict_json
from tests.support.scripted_server import InOrder, Reply, ScriptedServer

USER, PASSWORD, QUERY_SECRET = "alice", "pw-S3cret@x/y", "qs3cr3t-Query"
SECRETS = (QUERY_SECRET, PASSWORD, quote(PASSWORD, safe=""))


def secret_url(server: ScriptedServer, param: str = "api-key") -> str:
    return f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{server.port}/v1?{param}={QUERY_SECRET}&region=eu"


def basic_auth() -> str:
    return "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


def assert_sent_with_secrets(server: ScriptedServer, param: str) -> None:
    log = server.log
    assert log, "the server saw no request"
    for received in log:
        assert received.path in ("/v1/models", "/v1/chat/completions"), received.path  # not mangled by the query
        assert parse_qs(received.query) == {param: [QUERY_SECRET], "region": ["eu"]}
        assert received.headers.get("authorization") == basic_auth()


def assert_no_secret_in(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into {where}"


def assert_no_secret_in_files(folder: Path) -> None:
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert_no_secret_in(path.read_bytes().decode("utf-8", "replace"), str(path))


def echo_url_in_error(failing_problem_start: str):
    """Answers normally, except one item's request fails with an error that echoes the secret URL."""
    def handler(body):
        if body["messages"][-1]["content"].split("\n\n", 1)[-1].startswith(failing_problem_start):
            return Reply(status=400, error_message=f"bad request for /v1?api-key={QUERY_SECRET} as {USER}:{PASSWORD}")
        return Reply(text="So the answer is \\boxed{1}.")
    return handler


def test_generate_and_grade_send_url_secrets_but_never_write_them(tmp_path, caplog, capsys):
    from tasks import get_task

    first_problem = get_task("aime").load(get_task("aime").demo_data_path)[0].fields["problem"]
    out = tmp_path / "run"
    caplog.set_level(logging.DEBUG)
    with ScriptedServer(echo_url_in_error(first_problem[:40])) as gen, \
            ScriptedServer(InOrder([Reply(status=500, error_message=f"oops at ?key={QUERY_SECRET} for {PASSWORD}"),
                                    Reply(text=verdict_json("1", "no"))]), model=JUDGE_MODEL) as judge:
        rc = main(["generate", "--task", "aime", "--engine", "openai", "--base-url", secret_url(gen), "--model",
                   "test-model", "--out", str(out), "--samples", "1", "--limit", "3", "--no-progress",
                   "--max-retries", "0"])
        assert rc == 3  # one request failed (400, not retried) and was recorded as an error
        rc = main(["grade", str(out), "--judge", "llm", "--judge-model", JUDGE_MODEL, "--judge-base-url",
                   secret_url(judge, "key"), "--judge-max-retries", "0", "--no-progress"])
        assert rc == 3
        assert_sent_with_secrets(gen, "api-key")
        assert_sent_with_secrets(judge, "key")

    spec = json.loads((out / "run.json").read_text())
    assert spec["engine"]["base_urls"] == [f"http://127.0.0.1:{gen.port}/v1"]
    errors = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()
              if json.loads(line)["finish_reason"] == "error"]
    assert len(errors) == 1 and "bad request" in errors[0]["error"] and "***" in errors[0]["error"]
    [summary_path] = out.glob("grades/llm-*/summary.json")
    summary = json.loads(summary_path.read_text())
    assert summary["judge"]["config"]["base_urls"] == [f"http://127.0.0.1:{judge.port}/v1"]
    assert summary["counts"]["graded"] == 1 and summary["counts"]["judge_error"] == 1
    [judge_error] = [json.loads(line) for line in (summary_path.parent / "samples.jsonl").read_text().splitlines()
                     if json.loads(line)["status"] == "judge_error"]
    assert "oops at ?key=***" in judge_error["detail"]["error"]
    assert_no_secret_in_files(out)
    captured = capsys.readouterr()
    assert_no_secret_in(captured.out + captured.err, "the console")
    assert_no_secret_in(caplog.text, "the log")


def test_engine_redacts_url_secrets_and_names_endpoints_publicly():
    engine = OpenAIEngine("m", [f"http://{USER}:{quote(PASSWORD, safe='')}@h:8000/v1?api-key={QUERY_SECRET}"])
    assert engine.describe()["base_urls"] == ["http://h:8000/v1"]
    assert engine.redact(f"echo {QUERY_SECRET} {PASSWORD} {quote(PASSWORD, safe='')}") == "echo *** *** ***"


@pytest.mark.parametrize("url", ["ftp://alice:hunter2-secret@h/v1", "http://alice:hunter2-secret@[::1/v1",
                                 "http://:8000?key=hunter2-secret"])
def test_a_bad_base_url_is_refused_without_echoing_its_secret(url):
    with pytest.raises(EngineError) as info:
        split_base_url(url)
    assert "hunter2-secret" not in str(info.value) and "http(s) URL" in str(info.value)


def test_client_arguments_carry_query_and_basic_auth():
    kwargs = split_base_url(f"https://{USER}:{quote(PASSWORD, safe='')}@gw.example/v1/?api-key=k1&x=").client_kwargs()
    assert kwargs == {"base_url": "https://gw.example/v1", "default_query": {"api-key": "k1", "x": ""},
                      "default_headers": {"Authorization": basic_auth()}}
    assert split_base_url("http://127.0.0.1:8000/v1").client_kwargs() == {"base_url": "http://127.0.0.1:8000/v1"}
