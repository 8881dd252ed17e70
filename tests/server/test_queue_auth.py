"""Admission (429 + Retry-After), client disconnects cancelling engine work, and bearer-key checks."""
from __future__ import annotations

import json
import socket
import time

import httpx
import openai
import pytest

from engine.server.metrics import parse_metrics
from tests.server.conftest import fake_server
from tests.server.fake_engine import FakeEngine

BODY = {"model": "fake", "messages": [{"role": "user", "content": "count slowly"}], "max_tokens": 40, "stream": True}


def metrics(srv) -> dict[str, float]:
    return parse_metrics(httpx.get(srv.root_url + "/metrics").text)


def wait_for(cond, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def first_content_chunk(lines) -> dict:
    for line in lines:
        if line.startswith("data: ") and '"content":"' in line and '"content":""' not in line:
            return json.loads(line[6:])
    raise AssertionError("stream ended before any content")


def test_full_queue_answers_429_with_retry_after_and_recovers():
    slow = FakeEngine(token_delay_s=0.05, reply_words=40)
    with fake_server(slow, max_running=1, max_waiting=1, retry_after_s=2) as srv, httpx.Client(timeout=10) as c:
        with c.stream("POST", srv.base_url + "/chat/completions", json=BODY) as running:
            lines = running.iter_lines()  # kept: closing the iterator closes the connection
            first_content_chunk(lines)
            with c.stream("POST", srv.base_url + "/chat/completions", json=BODY) as waiting:
                assert waiting.status_code == 200
                assert wait_for(lambda: metrics(srv)["harness_requests_waiting"] == 1)
                r = c.post(srv.base_url + "/chat/completions", json={**BODY, "stream": False})
                assert r.status_code == 429 and r.headers["retry-after"] == "2"
                assert r.json()["error"]["type"] == "rate_limit_error"
                m = metrics(srv)
                assert m["harness_requests_running"] == 1 and m['harness_requests_rejected_total{status="429"}'] == 1
        assert slow.peak_running == 1  # the engine never saw more than the running limit
        assert wait_for(lambda: metrics(srv)["harness_requests_running"] == 0)
        r = c.post(srv.base_url + "/chat/completions", json={**BODY, "stream": False, "max_tokens": 2})
        assert r.status_code == 200


def test_openai_client_sees_a_rate_limit_error():
    slow = FakeEngine(token_delay_s=0.05, reply_words=40)
    with fake_server(slow, max_running=1, max_waiting=0) as srv, httpx.Client(timeout=10) as c:
        with c.stream("POST", srv.base_url + "/chat/completions", json=BODY) as running:
            lines = running.iter_lines()  # kept: closing the iterator closes the connection
            first_content_chunk(lines)
            client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
            with pytest.raises(openai.RateLimitError):
                client.chat.completions.create(model="fake", messages=BODY["messages"], max_tokens=2)


def test_disconnected_stream_cancels_the_engine_request_and_frees_its_blocks():
    slow = FakeEngine(token_delay_s=0.05, reply_words=40)
    with fake_server(slow) as srv, httpx.Client(timeout=10) as c:
        with c.stream("POST", srv.base_url + "/chat/completions", json=BODY) as r:
            lines = r.iter_lines()
            first_content_chunk(lines)
            assert metrics(srv)["harness_kv_blocks_used"] > 0
        assert wait_for(lambda: len(slow.aborted) == 1)
        assert slow.finished == [] and slow.blocks == {}
        m = metrics(srv)
        assert m["harness_kv_blocks_used"] == 0 and m["harness_requests_cancelled_total"] == 1
        assert m["harness_requests_running"] == 0


def test_disconnect_during_a_non_streaming_request_cancels_it():
    slow = FakeEngine(token_delay_s=0.05, reply_words=40)
    with fake_server(slow) as srv:
        body = json.dumps({**BODY, "stream": False}).encode()
        with socket.create_connection((srv.host, srv.port)) as s:
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            assert wait_for(lambda: len(slow.started) == 1)
        assert wait_for(lambda: len(slow.aborted) == 1)
        assert slow.finished == [] and wait_for(lambda: metrics(srv)["harness_requests_running"] == 0)


def test_a_waiting_request_that_disconnects_leaves_the_queue_without_reaching_the_engine():
    slow = FakeEngine(token_delay_s=0.05, reply_words=40)
    with fake_server(slow, max_running=1) as srv, httpx.Client(timeout=10) as c:
        with c.stream("POST", srv.base_url + "/chat/completions", json=BODY) as running:
            lines = running.iter_lines()  # kept: closing the iterator closes the connection
            first_content_chunk(lines)
            with c.stream("POST", srv.base_url + "/chat/completions", json=BODY) as waiting:
                assert waiting.status_code == 200
                assert wait_for(lambda: metrics(srv)["harness_requests_waiting"] == 1)
            assert wait_for(lambda: metrics(srv)["harness_requests_waiting"] == 0)
            assert len(slow.started) == 1


@pytest.fixture(scope="module")
def keyed():
    with fake_server(FakeEngine(), api_key="s3cret-key") as srv:
        yield srv


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-key"},
                                     {"Authorization": "Basic s3cret-key"}])
def test_missing_or_wrong_key_is_401(keyed, headers):
    for method, path in (("POST", "/chat/completions"), ("POST", "/completions"), ("GET", "/models")):
        r = httpx.request(method, keyed.base_url + path, headers=headers,
                          json={"model": "fake", "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 401, (path, headers)
        assert r.json()["error"]["type"] == "authentication_error"


def test_right_key_works_and_health_stays_open(keyed):
    client = openai.OpenAI(base_url=keyed.base_url, api_key="s3cret-key", max_retries=0)
    r = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "hi"}], max_tokens=2)
    assert r.choices[0].message.content
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=keyed.base_url, api_key="nope", max_retries=0).models.list()
    assert httpx.get(keyed.root_url + "/health").status_code == 200
