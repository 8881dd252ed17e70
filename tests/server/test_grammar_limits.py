"""response_format under admission, against a real server over the real model: depth/size limits, a compile time
limit, compiles stopped when their client hangs up, and a bounded cache by schema hash."""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import socket
import time

import httpx
import pytest

from engine.base import EngineOptions
from engine.server import ServerSettings, serve_in_background
from engine.server.metrics import parse_metrics

pytest.importorskip("xgrammar")
MODEL = "smollm2-135m"


def nested(levels: int) -> dict:
    """An object schema nested `levels` objects deep (the document nests about twice as deep)."""
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"], "additionalProperties": False}
    return schema


def body(schema: dict) -> dict:
    return {"model": MODEL, "messages": [{"role": "user", "content": "JSON please"}], "max_tokens": 8,
            "temperature": 0, "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}}


@pytest.fixture(scope="module")
def engine():
    from engine.server.native import ServingNativeEngine
    eng = ServingNativeEngine.from_options(EngineOptions(model=MODEL, threads=2, kv_cache_gib=0.25, max_model_len=512))
    yield eng
    asyncio.run(eng.aclose())


def _compilers() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.name == "grammar-compiler"}


def _metrics(srv) -> dict[str, float]:
    return parse_metrics(httpx.get(srv.root_url + "/metrics", timeout=30).text)


def test_schemas_over_the_depth_or_size_limit_are_400s_naming_the_limit(engine):
    settings = ServerSettings(served_model_name=MODEL, max_schema_depth=40, max_schema_bytes=4096)
    with serve_in_background(engine, settings, close_engine=False) as srv:
        r = httpx.post(srv.base_url + "/chat/completions", json=body(nested(400)), timeout=30)
        assert r.status_code == 400 and "--max-schema-depth" in r.json()["error"]["message"]
        assert r.json()["error"]["param"] == "response_format.json_schema.schema"
        wide = {"type": "object", "properties": {f"field_{i}": {"type": "integer"} for i in range(400)}}
        r = httpx.post(srv.base_url + "/chat/completions", json=body(wide), timeout=30)
        assert r.status_code == 400 and "--max-schema-bytes" in r.json()["error"]["message"]
        assert _metrics(srv)['harness_grammar_requests_total{result="refused"}'] == 2


@pytest.mark.slow  # starts a compiler process (seconds of imports on a busy machine)
def test_a_compile_over_the_time_limit_is_a_400_and_is_stopped(engine):
    settings = ServerSettings(served_model_name=MODEL, max_schema_depth=10_000, grammar_timeout_s=0.3)
    with serve_in_background(engine, settings, close_engine=False) as srv:
        before = _compilers()  # (other engines' compilers, in a test session that runs them all)
        r = httpx.post(srv.base_url + "/chat/completions", json=body(nested(300)), timeout=60)
        assert r.status_code == 400 and "did not compile within 0.3 s" in r.json()["error"]["message"]
        assert _compilers() <= before  # the compiling process was stopped, not left to finish
        ok = httpx.post(srv.base_url + "/chat/completions", json=body(nested(2)), timeout=120)  # a fresh compiler
        assert ok.status_code == 200, ok.text


def _send_and_hang_up(srv, payload: dict) -> socket.socket:
    raw = json.dumps(payload).encode()
    sock = socket.create_connection((srv.host, srv.port), timeout=5)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(raw), raw))
    return sock


@pytest.mark.slow  # starts a compiler process (seconds of imports on a busy machine)
def test_compiles_of_clients_that_hang_up_are_cancelled_and_burn_nothing_after(engine):
    settings = ServerSettings(served_model_name=MODEL, max_schema_depth=10_000, grammar_timeout_s=120)
    with serve_in_background(engine, settings, close_engine=False) as srv:
        before = _compilers()
        socks = [_send_and_hang_up(srv, body(nested(300 + i))) for i in range(4)]  # distinct: no cache hits
        deadline = time.monotonic() + 60
        while _metrics(srv)["harness_grammar_compiling"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        health = httpx.get(srv.root_url + "/health", timeout=10).json()
        assert health["compiling"] == 1 and health["compile_waiting"] == 3  # one at a time, the rest queued
        for s in socks:
            s.close()
        deadline = time.monotonic() + 30
        while (_metrics(srv)['harness_grammar_requests_total{result="cancelled"}'] < 4
               and time.monotonic() < deadline):
            time.sleep(0.05)
        m = _metrics(srv)
        assert m['harness_grammar_requests_total{result="cancelled"}'] == 4
        assert m["harness_grammar_compiling"] == 0 and m["harness_grammar_waiting"] == 0
        assert _compilers() <= before  # no process is still compiling for clients that left


@pytest.mark.slow  # starts a compiler process (seconds of imports on a busy machine)
def test_compiled_grammars_are_cached_by_schema_hash_with_a_bounded_size(engine):
    settings = ServerSettings(served_model_name=MODEL, grammar_cache_size=2)
    with serve_in_background(engine, settings, close_engine=False) as srv:
        a = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "boolean"}}}
        same_a = {"properties": {"y": {"type": "boolean"}, "x": {"type": "integer"}}, "type": "object"}
        for schema in (a, same_a, nested(1), nested(2), a):
            assert httpx.post(srv.base_url + "/chat/completions", json=body(schema), timeout=120).status_code == 200
        m = _metrics(srv)
        # `same_a` is `a` with its keys reordered: a cache hit; `a` again after two others: evicted, compiled again.
        assert m['harness_grammar_requests_total{result="cached"}'] == 1
        assert m['harness_grammar_requests_total{result="compiled"}'] == 4
        assert m["harness_grammar_cache_entries"] == 2
