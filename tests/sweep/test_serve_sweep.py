"""Serving sweep against a real local OpenAI-compatible server with scripted timing."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.scripted_server import Reply, ScriptedServer, unused_url
from tests.sweep.conftest import assert_chart, read_records, run_cli, write_config

DELAY_S, TOKEN_DELAY_S = 0.15, 0.03


def serve_config(folder: Path, points: str = "[1, 3]", extra: str = "") -> Path:
    body = f"""kind = "serve"
warmup_steps = 1
points = {points}
[serve]
base_url = "http://127.0.0.1:1/v1"
model = "m"
input_tokens = 12
output_tokens = 8
requests_per_point = 6
slo = {{ ttft_ms = 1000, tpot_ms = 1000 }}
{extra}
"""
    return write_config(folder, "tiny-serve", body)


def test_ttft_and_tpot_match_the_scripted_server(tmp_path: Path):
    reply = Reply(text="one two three four five six seven eight", delay_s=DELAY_S, token_delay_s=TOKEN_DELAY_S)
    with ScriptedServer(reply, model="m") as server:
        rc = run_cli("serve", str(serve_config(tmp_path)), "--base-url", server.base_url, "--out-dir", str(tmp_path))
        bodies = server.requests
    assert rc == 0
    assert len(bodies) == 2 * (6 + 1)  # two points, six measured and one warm-up request each
    assert all(b["stream"] and b["stream_options"]["include_usage"] for b in bodies)
    assert all(len(b["messages"][0]["content"].split()) == 12 and b["max_tokens"] == 8 for b in bodies)
    records = read_records(tmp_path / "tiny-serve" / "results.jsonl")
    assert [r["point"]["concurrency"] for r in records] == [1, 3]
    for r in records:
        m = r["metrics"]
        assert r["status"] == "ok" and m["completed"] == 6 and m["failed"] == 0
        assert m["output_tokens_per_request"] == 8 and m["token_source"] == ["usage"]
        assert m["prompt_tokens_per_request"] == 12
        # scripted: first byte after DELAY_S, then 7 gaps of TOKEN_DELAY_S between 8 one-token chunks
        assert DELAY_S * 1e3 <= m["median_ttft_ms"] < DELAY_S * 1e3 + 40
        # a late first chunk shortens the gaps after it, so allow a little under the scripted delay
        assert TOKEN_DELAY_S * 1e3 * 0.9 <= m["median_tpot_ms"] < TOKEN_DELAY_S * 1e3 * 1.25
        assert m["median_itl_ms"] == pytest.approx(TOKEN_DELAY_S * 1e3, rel=0.25)
        assert m["median_e2el_ms"] == pytest.approx((DELAY_S + 7 * TOKEN_DELAY_S) * 1e3, rel=0.15)
        assert m["intvty"] == pytest.approx(1e3 / m["median_tpot_ms"]) == m["median_intvty"]
        assert m["goodput_fraction"] == 1.0
        assert m["client_loop_lag_ms_p99"] is not None and m["client_parse_fraction"] < 0.25
        assert "tpot" in r["definitions"] and r["denominators"]["gpus"] == 1
        assert r["steps"] == {"warmup_requests": 1, "measured_requests": 6}
    # three concurrent streams finish in about the time of one: throughput roughly triples
    assert records[1]["metrics"]["output_throughput"] > 2.0 * records[0]["metrics"]["output_throughput"]
    assert_chart(tmp_path / "tiny-serve" / "pareto.png")


def test_tokens_are_counted_from_usage_not_chunks(tmp_path: Path):
    # four chunks carrying 3 tokens each (as with speculative decoding): 12 tokens, 3 gaps
    reply = Reply(text="abcd", chunks=["a", "b", "c", "d"], chunk_tokens=[3, 3, 3, 3],
                  delay_s=0.05, token_delay_s=0.06)
    with ScriptedServer(reply, model="m") as server:
        rc = run_cli("serve", str(serve_config(tmp_path, "[2]")), "--base-url", server.base_url,
                     "--out-dir", str(tmp_path))
    assert rc == 0
    m = read_records(tmp_path / "tiny-serve" / "results.jsonl")[0]["metrics"]
    assert m["output_tokens_per_request"] == 12
    # TPOT = (E2E - TTFT) / (12 - 1) = 3 gaps x 60 ms / 11 tokens
    assert m["median_tpot_ms"] == pytest.approx(3 * 60 / 11, rel=0.25)
    assert m["median_itl_ms"] == pytest.approx(60, rel=0.25)


def test_request_rates_use_poisson_arrivals(tmp_path: Path):
    reply = Reply(text="a b c", delay_s=0.01, token_delay_s=0.01)
    cfg = serve_config(tmp_path, "[4]", extra="rates = [20.0]")
    with ScriptedServer(reply, model="m") as server:
        assert run_cli("serve", str(cfg), "--base-url", server.base_url, "--out-dir", str(tmp_path)) == 0
    (r,) = read_records(tmp_path / "tiny-serve" / "results.jsonl")
    assert r["point"]["rate"] == 20.0 and r["metrics"]["completed"] == 6
    # five gaps at 20/s take ~0.25 s on average; all at once the six requests would take ~0.04 s
    assert r["metrics"]["duration"] > 0.08


def test_unreachable_server_records_errors_for_every_point(tmp_path: Path):
    cfg = serve_config(tmp_path, "[1, 2]")
    rc = run_cli("serve", str(cfg), "--base-url", unused_url(), "--out-dir", str(tmp_path), "--warmup-steps", "0")
    assert rc == 1
    records = read_records(tmp_path / "tiny-serve" / "results.jsonl")
    assert [r["status"] for r in records] == ["error", "error"]
    assert "all 6 requests failed" in records[0]["reason"] and "Connect" in records[0]["reason"]


def _sweep_prompts_file(tmp_path: Path, lines: str) -> list:
    """Run the completions sweep over a prompts file against a scripted server; the POSTs it received."""
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(lines)
    cfg = serve_config(tmp_path, "[2]", extra=f'endpoint = "completions"\nprompts_file = "{prompts}"')
    with ScriptedServer(Reply(text="x y z", token_delay_s=0.005), model="m") as server:
        assert run_cli("serve", str(cfg), "--base-url", server.base_url, "--out-dir", str(tmp_path)) == 0
        return [r for r in server.log if r.method == "POST"]


def test_completions_endpoint_with_prompts_from_a_file(tmp_path: Path):
    posts = _sweep_prompts_file(tmp_path, '{"prompt": "first prompt"}\n{"prompt": "second prompt here"}\n')
    assert {r.path for r in posts} == {"/v1/completions"}
    assert {r.body["prompt"] for r in posts} == {"first prompt", "second prompt here"}
    (r,) = read_records(tmp_path / "tiny-serve" / "results.jsonl")
    assert r["metrics"]["output_tokens_per_request"] == 3 and r["metrics"]["completed"] == 6


def test_token_id_prompts_are_sent_as_ids(tmp_path: Path):
    bodies = [r.body for r in _sweep_prompts_file(tmp_path, '{"prompt": [5, 6, 7]}\n{"prompt": [9, 8]}\n')]
    assert {tuple(b["prompt"]) for b in bodies} == {(5, 6, 7), (9, 8)}


def test_token_id_prompts_need_the_completions_endpoint(tmp_path: Path):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": [5, 6, 7]}\n')
    cfg = serve_config(tmp_path, "[2]", extra=f'prompts_file = "{prompts}"')
    with pytest.raises(ValueError, match=r"prompts.jsonl:1: a token-id prompt needs serve.endpoint = 'completions'"):
        from sweep.config import load_config
        from sweep.serve import ServeSweep
        ServeSweep(load_config(str(cfg)))


def test_server_without_usage_falls_back_to_counting_chunks(tmp_path: Path):
    # a stream with no usage chunk: the record must say tokens were counted as chunks
    events = "".join(f'data: {{"choices": [{{"index": 0, "delta": {{"content": "t{i} "}}}}]}}\n\n' for i in range(5))
    reply = Reply(raw_body=events + "data: [DONE]\n\n")
    with ScriptedServer(reply, model="m") as server:
        assert run_cli("serve", str(serve_config(tmp_path, "[1]")), "--base-url", server.base_url,
                       "--out-dir", str(tmp_path)) == 0
    (r,) = read_records(tmp_path / "tiny-serve" / "results.jsonl")
    assert r["metrics"]["token_source"] == ["chunks"] and r["metrics"]["output_tokens_per_request"] == 5


def test_goodput_counts_only_requests_within_the_slos(tmp_path: Path):
    # TTFT is ~150 ms by script: an 80 ms TTFT SLO fails every request, a 1 s one passes them all
    reply = Reply(text="a b c d", delay_s=DELAY_S, token_delay_s=0.01)
    strict = serve_config(tmp_path, "[2]").read_text().replace("ttft_ms = 1000", "ttft_ms = 80")
    (tmp_path / "tiny-serve.toml").write_text(strict)
    with ScriptedServer(reply, model="m") as server:
        assert run_cli("serve", str(tmp_path / "tiny-serve.toml"), "--base-url", server.base_url,
                       "--out-dir", str(tmp_path / "strict")) == 0
        assert run_cli("serve", str(serve_config(tmp_path, "[2]")), "--base-url", server.base_url,
                       "--out-dir", str(tmp_path / "loose")) == 0
    strict_m = read_records(tmp_path / "strict" / "tiny-serve" / "results.jsonl")[0]["metrics"]
    loose_m = read_records(tmp_path / "loose" / "tiny-serve" / "results.jsonl")[0]["metrics"]
    assert strict_m["goodput_fraction"] == 0.0 and strict_m["request_goodput"] == 0.0
    assert loose_m["goodput_fraction"] == 1.0
    assert loose_m["request_goodput"] == pytest.approx(loose_m["request_throughput"]) == loose_m["goodput"]


def test_url_secrets_are_sent_with_each_request_but_never_written(tmp_path: Path, caplog, capsys):
    import base64
    import itertools
    import logging
    from urllib.parse import parse_qs, quote

    user, password, query_secret = "alice", "pw-S3cret@x/y", "qs3cr3t-Query"
    echo = f"bad request for /v1?api-key={query_secret} as {user}:{password}"
    counter = itertools.count(1)

    def handler(body):
        # requests 1-3 are point 1 (all fail: the point's reason quotes an error); one of point 2's fails
        n = next(counter)
        return Reply(status=400, error_message=echo) if n <= 3 or n == 5 else Reply(text="a b c")

    cfg = serve_config(tmp_path, "[1, 2]", extra="requests_per_point = 2").read_text()
    cfg = cfg.replace("requests_per_point = 6\n", "")
    config = write_config(tmp_path, "tiny-serve", cfg)
    caplog.set_level(logging.DEBUG)
    with ScriptedServer(handler, model="m") as server:
        url = f"http://{user}:{quote(password, safe='')}@127.0.0.1:{server.port}/v1?api-key={query_secret}&region=eu"
        rc = run_cli("serve", str(config), "--base-url", url, "--out-dir", str(tmp_path / "out"))
        log = server.log
    assert rc == 1  # point 1 failed as a whole
    assert len(log) == 6
    auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    for received in log:  # the query is a query, not part of the path, and userinfo is Basic auth
        assert received.path == "/v1/chat/completions"
        assert parse_qs(received.query) == {"api-key": [query_secret], "region": ["eu"]}
        assert received.headers.get("authorization") == auth
    records = read_records(tmp_path / "out" / "tiny-serve" / "results.jsonl")
    assert [r["status"] for r in records] == ["error", "ok"]
    assert "***" in records[0]["reason"] and "***" in records[1]["metrics"]["errors"][0]
    assert records[1]["provenance"]["base_url"] == f"http://127.0.0.1:{server.port}/v1"
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file() and p.suffix != ".png"]
    written = "".join(p.read_text(encoding="utf-8") for p in files)
    console = capsys.readouterr()
    for secret in (query_secret, password, quote(password, safe="")):
        for where, text in (("results", written), ("console", console.out + console.err), ("log", caplog.text)):
            assert secret not in text, f"{secret!r} leaked into the {where}"
