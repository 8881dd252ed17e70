"""Server limits under hostile input: request width, bursts past the queue, stalled bodies, non-finite sampling values."""
from __future__ import annotations

import asyncio
import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, AsyncIterator

import httpx
import pytest

from engine.base import SamplingParams, StreamDelta
from engine.server import BackgroundServer, ServerSettings
from engine.server.admission import Admission
from engine.server.errors import APIError
from engine.server.metrics import parse_metrics
from tests.server.conftest import fake_server
from tests.server.fake_engine import FakeEngine

CHAT = {"model": "fake", "messages": [{"role": "user", "content": "count slowly"}], "max_tokens": 40}


def metrics(srv) -> dict[str, float]:
    return parse_metrics(httpx.get(srv.root_url + "/metrics").text)


def data_lines(lines) -> list[str]:
    return [line[6:] for line in lines if line.startswith("data: ")]


def test_a_request_for_too_many_sequences_is_a_400_naming_the_setting_and_does_not_hold_up_others():
    with fake_server(FakeEngine(token_delay_s=0.001)) as srv:
        small = {"model": "fake", "prompt": "alpha beta", "max_tokens": 4}
        t0 = time.perf_counter()
        assert httpx.post(srv.base_url + "/completions", json=small, timeout=60).status_code == 200
        baseline = time.perf_counter() - t0
        # 2,000 prompts x n = 16 in a ~20 KB body: 32,000 sequences.
        wide = {"model": "fake", "prompt": [f"alpha beta {i}" for i in range(2000)], "n": 16, "max_tokens": 4}

        def send(body: dict) -> tuple[httpx.Response, float]:
            start = time.perf_counter()
            r = httpx.post(srv.base_url + "/completions", json=body, timeout=120)
            return r, time.perf_counter() - start

        with ThreadPoolExecutor(2) as pool:
            wide_f = pool.submit(send, wide)
            time.sleep(0.05)
            small_f = pool.submit(send, small)
            (r_wide, _), (r_small, small_s) = wide_f.result(), small_f.result()
        assert r_wide.status_code == 400, r_wide.text[:300]
        err = r_wide.json()["error"]
        assert err["param"] == "prompt" and err["code"] == "too_many_sequences"
        assert "32000" in err["message"] and "--max-seqs-per-request" in err["message"] and "256" in err["message"]
        assert r_small.status_code == 200 and r_small.json()["choices"][0]["text"]
        assert small_s < 2.0 + 20 * baseline  # it did not queue behind the wide request
        assert len(srv.fake.started) == 2  # the engine saw only the two small requests


@pytest.mark.parametrize("path,body,param", [
    ("/chat/completions", {**CHAT, "n": 5}, "n"),
    ("/completions", {"model": "fake", "prompt": "alpha", "n": 5}, "n"),
    ("/completions", {"model": "fake", "prompt": [[1, 2], [3], [4]], "n": 2}, "prompt"),
])
def test_the_sequence_limit_is_a_setting_and_counts_prompts_times_n(path, body, param):
    with fake_server(max_seqs_per_request=4) as srv:
        r = httpx.post(srv.base_url + path, json=body)
        assert r.status_code == 400 and r.json()["error"]["param"] == param
        assert "at most 4 per request" in r.json()["error"]["message"]
        ok = {**body, "n": 1} if param == "n" else {**body, "prompt": [[1, 2], [3]]}
        assert httpx.post(srv.base_url + path, json=ok).status_code == 200
        assert metrics(srv)['harness_requests_rejected_total{status="400"}'] == 1


def _http_reply(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and (de-chunked) body of one HTTP/1.1 response read to the end of the connection."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    if headers.get("transfer-encoding") == "chunked":
        out = b""
        while body:
            size, _, rest = body.partition(b"\r\n")
            n = int(size, 16)
            out, body = out + rest[:n], rest[n + 2:]
        body = out
    return int(status_line.split()[1]), headers, body


class LoopRecordingEngine(FakeEngine):
    """Remembers the server's event loop, so a test can hold it busy for a moment."""

    loop: asyncio.AbstractEventLoop | None = None

    async def stream_prompt(self, *args: Any, **kw: Any) -> AsyncIterator[StreamDelta]:
        self.loop = asyncio.get_running_loop()
        async for d in super().stream_prompt(*args, **kw):
            yield d


def test_a_burst_of_streams_past_the_queue_gets_429s_with_retry_after_and_the_admitted_ones_complete():
    slow = LoopRecordingEngine(token_delay_s=0.05, reply_words=40)  # about 2 s per request
    with fake_server(slow, max_running=1, max_waiting=2, retry_after_s=3) as srv:
        assert httpx.post(srv.base_url + "/chat/completions", json={**CHAT, "max_tokens": 1}).status_code == 200
        body = json.dumps({**CHAT, "stream": True}).encode()
        request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        socks = [socket.create_connection((srv.host, srv.port), timeout=120) for _ in range(20)]
        for s in socks:  # all but the last byte: the server accepts each connection and waits for the body
            s.sendall(request[:-1])
        time.sleep(0.5)
        # A busy event loop (a long parse, a slow step) meets the requests all at once when it wakes: hold it
        # while the last bytes arrive, so all 20 handlers run in the same loop turn.
        slow.loop.call_soon_threadsafe(time.sleep, 1.0)
        time.sleep(0.1)
        for s in socks:
            s.sendall(request[-1:])
        with ThreadPoolExecutor(20) as pool:
            results = [_http_reply(raw) for raw in pool.map(_recv_all, socks)]
        for s in socks:
            s.close()
        admitted = [body for status, _, body in results if status == 200]
        refused = [(headers, body) for status, headers, body in results if status == 429]
        assert len(admitted) + len(refused) == 20
        # One running and two queued are admitted; everything else is refused before the stream starts.
        assert len(admitted) == 3 and len(refused) == 17
        for headers, body in refused:
            assert headers["retry-after"] == "3" and headers["content-type"].startswith("application/json")
            assert json.loads(body)["error"]["type"] == "rate_limit_error"
        for body in admitted:
            data = data_lines(body.decode().split("\n"))
            assert data[-1] == "[DONE]" and not any('"error"' in d for d in data)
            assert json.loads(data[-2])["choices"][0]["finish_reason"] == "length"
        m = metrics(srv)
        assert m['harness_requests_rejected_total{status="429"}'] == len(refused)
        assert m["harness_requests_running"] == 0 and m["harness_requests_waiting"] == 0
        assert slow.peak_running == 1 and len(slow.finished) == len(admitted) + 1


def _recv_all(sock: socket.socket) -> bytes:
    out = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return out
        out += chunk


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_body_that_never_finishes_gets_408_and_holds_no_slot(http):
    settings = ServerSettings(served_model_name="fake", body_timeout_s=1.0, max_running=1, max_waiting=0)
    srv = BackgroundServer(FakeEngine(), settings, http=http).start()
    try:
        with socket.create_connection((srv.host, srv.port), timeout=30) as s:
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n" + b'{"model": ')  # 10 of the 1,000 bytes promised
            t0 = time.monotonic()
            # While that body is stalled, the only running slot is free for others.
            r = httpx.post(srv.base_url + "/chat/completions", json={**CHAT, "max_tokens": 2}, timeout=30)
            assert r.status_code == 200
            reply = _recv_all(s)  # the server answers, then closes the connection
            waited = time.monotonic() - t0
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), reply[:200]
        assert b"connection: close" in head.lower()
        err = json.loads(body)["error"]
        assert err["param"] == "body" and "1 s" in err["message"] and "10 bytes" in err["message"]
        assert 0.8 <= waited < 15
        m = metrics(srv)
        assert m['harness_requests_rejected_total{status="408"}'] == 1 and m["harness_requests_running"] == 0
    finally:
        srv.stop()


def test_a_body_that_trickles_in_past_the_deadline_gets_408():
    with fake_server(body_timeout_s=1.0) as srv, socket.create_connection((srv.host, srv.port), timeout=30) as s:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        try:
            for _ in range(20):  # a byte every 0.2 s: each arrives in time, the whole never does
                s.sendall(b" ")
                time.sleep(0.2)
        except OSError:
            pass  # the server answered and closed while we were still sending
        assert _recv_all(s).startswith(b"HTTP/1.1 408")


@pytest.mark.parametrize("field,raw", [("temperature", "NaN"), ("temperature", "Infinity"), ("temperature", "1e999"),
                                       ("top_p", "NaN"), ("top_p", "-Infinity"), ("top_k", "NaN")])
def test_non_finite_sampling_values_are_a_400_naming_the_field(server, field, raw):
    body = json.dumps({**CHAT, "max_tokens": 2})[:-1] + f', "{field}": {raw}}}'
    r = httpx.post(server.base_url + "/chat/completions", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == field and "finite" in err["message"]


class RecordingEngine(FakeEngine):
    """Keeps the sampling params each request reached the engine with."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.params: list[SamplingParams] = []

    async def stream_prompt(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                            logits_constraint: Any = None) -> AsyncIterator[StreamDelta]:
        self.params.append(params)
        async for d in super().stream_prompt(request_id, prompt_token_ids, params, logits_constraint):
            yield d


def test_tiny_positive_temperatures_reach_the_engine_unchanged():
    # The sampler treats temperatures below its floor as greedy; the server must not refuse or round them.
    engine = RecordingEngine()
    with fake_server(engine) as srv:
        for path, body in (("/chat/completions", CHAT), ("/completions", {"model": "fake", "prompt": "alpha"})):
            r = httpx.post(srv.base_url + path, json={**body, "max_tokens": 2, "temperature": 1e-45})
            assert r.status_code == 200, r.text
        assert [p.temperature for p in engine.params] == [1e-45, 1e-45]


def test_admission_is_decided_on_arrival_and_shares_slots_between_requests():
    async def scenario() -> None:
        adm = Admission(max_running=4, max_waiting=1, retry_after_s=1.5)  # at most 2 running per request
        wide = adm.enter(8)
        assert wide.granted and wide.held == 2 and adm.running == 2  # capped: half the slots stay free
        small = adm.enter(1)
        other = adm.enter(3)
        assert small.held == 1 and other.held == 1 and adm.running == 4
        queued = adm.enter(1)
        assert not queued.granted and adm.waiting == 1
        with pytest.raises(APIError) as refused:
            adm.enter(1)
        assert refused.value.status == 429 and refused.value.headers["Retry-After"] == "2"
        await asyncio.wait_for(wide.acquire(), 1)
        wide.done_one()  # a slot frees: it goes to the request holding none, not back to `wide`
        assert queued.granted and wide.held == 1 and adm.running == 4
        small.release()  # `wide` and `other` hold one each: the older one gets the slot
        assert wide.held == 2 and other.held == 1
        late = adm.enter(1)
        assert not late.granted
        late.release()  # a waiter that leaves frees its queue place
        assert adm.waiting == 0
        for t in (wide, other, queued):
            t.release()
            t.release()  # a second release is a no-op
        assert adm.running == 0

    asyncio.run(scenario())
