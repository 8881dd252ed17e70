"""Graceful shutdown: stop accepting, let running requests finish within the grace period, then end open
streams with an error event and [DONE]; no tracebacks, and `harness serve` exits 0 on SIGTERM."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from engine.server import BackgroundServer, ServerSettings
from tests.server.fake_engine import FakeEngine

ROOT = Path(__file__).resolve().parents[2]
CHAT = {"model": "fake", "messages": [{"role": "user", "content": "count slowly"}], "stream": True}


def read_stream(client: httpx.Client, url: str, body: dict, started: threading.Event | None = None) -> list[str]:
    """The data lines of one SSE stream, read to its end; `started` is set at the first content chunk."""
    out = []
    with client.stream("POST", url, json=body) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: "):
                out.append(line[6:])
                if started is not None and '"content":"' in line and '"content":""' not in line:
                    started.set()
    return out


def test_shutdown_lets_short_requests_finish_and_ends_long_streams_with_an_error_and_done(caplog):
    engine = FakeEngine(token_delay_s=0.05, reply_words=400, max_model_len=4096)  # a long stream: about 20 s
    srv = BackgroundServer(engine, ServerSettings(served_model_name="fake", shutdown_grace_s=3.0)).start()
    url = srv.base_url + "/chat/completions"
    stopper = threading.Thread(target=srv.stop)
    with caplog.at_level(logging.INFO, logger="uvicorn.error"), httpx.Client(timeout=60) as c, \
            ThreadPoolExecutor(3) as pool:
        long_started, short_started = threading.Event(), threading.Event()
        long_f = pool.submit(read_stream, c, url, {**CHAT, "max_tokens": 400}, long_started)
        short_f = pool.submit(read_stream, c, url, {**CHAT, "max_tokens": 20}, short_started)  # about 1 s
        plain_f = pool.submit(c.post, url, json={**CHAT, "stream": False, "max_tokens": 300})
        assert long_started.wait(30) and short_started.wait(30)
        t0 = time.monotonic()
        stopper.start()
        time.sleep(0.3)
        with pytest.raises(OSError):  # no longer accepting
            socket.create_connection((srv.host, srv.port), timeout=5).close()
        short = short_f.result(timeout=60)
        long = long_f.result(timeout=60)
        plain = plain_f.result(timeout=60)
        stopper.join(60)
        took = time.monotonic() - t0
    # The short request finished normally inside the grace period.
    assert short[-1] == "[DONE]" and not any('"error"' in d for d in short)
    assert json.loads(short[-2])["choices"][0]["finish_reason"] == "length"
    # The long stream was cut at the end of the grace period: an error event, then [DONE].
    assert long[-1] == "[DONE]"
    err = json.loads(long[-2])["error"]
    assert err["code"] == "server_shutting_down" and err["type"] == "server_error"
    assert sum('"content":"' in d for d in long) < 400
    # A non-streamed request still running is answered with a 503 naming the reason.
    assert plain.status_code == 503 and plain.json()["error"]["code"] == "server_shutting_down"
    assert not stopper.is_alive() and took < 3.0 + 20
    assert len(engine.aborted) == 2 and engine.blocks == {}  # the cut requests were aborted in the engine
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Cancel" not in logged and "Exception in ASGI application" not in logged
    assert not any(r.exc_info for r in caplog.records)


def test_a_request_queued_at_shutdown_is_ended_too():
    engine = FakeEngine(token_delay_s=0.05, reply_words=400, max_model_len=4096)
    settings = ServerSettings(served_model_name="fake", shutdown_grace_s=0.5, max_running=1)
    srv = BackgroundServer(engine, settings).start()
    url = srv.base_url + "/chat/completions"
    with httpx.Client(timeout=60) as c, ThreadPoolExecutor(2) as pool:
        started = threading.Event()
        running_f = pool.submit(read_stream, c, url, {**CHAT, "max_tokens": 400}, started)
        assert started.wait(30)
        queued_f = pool.submit(read_stream, c, url, {**CHAT, "max_tokens": 400})
        deadline = time.monotonic() + 30
        while httpx.get(srv.root_url + "/health").json()["waiting"] != 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        srv.stop()
        for lines in (running_f.result(60), queued_f.result(60)):
            assert lines[-1] == "[DONE]" and json.loads(lines[-2])["error"]["code"] == "server_shutting_down"
    assert len(engine.started) == 1  # the queued request never reached the engine


def _drain_stderr(proc: subprocess.Popen, lines: list[str], url_found: threading.Event, box: dict) -> None:
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"on (http://\S+/v1)", line)
        if m and not url_found.is_set():
            box["url"] = m.group(1)
            url_found.set()


def test_sigterm_on_harness_serve_ends_open_streams_cleanly_and_exits_0():
    grace = 2.0
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "serve", "--port", "0", "--threads", "1", "--kv-cache-gib", "0.25",
         "--max-model-len", "2048", "--shutdown-grace-s", str(grace), "--log-level", "info"],
        cwd=ROOT, env=dict(os.environ), stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    url_found, box = threading.Event(), {}
    reader = threading.Thread(target=_drain_stderr, args=(proc, lines, url_found, box), daemon=True)
    reader.start()
    try:
        assert url_found.wait(120), "".join(lines)
        body = {"model": "smollm2-135m", "prompt": "Once upon a time", "max_tokens": 1500, "ignore_eos": True,
                "stream": True, "temperature": 0}
        got: list[str] = []
        with httpx.Client(timeout=120) as c, c.stream("POST", box["url"] + "/completions", json=body) as r:
            assert r.status_code == 200
            sent_at = None
            for line in r.iter_lines():
                if not line.startswith("data: "):
                    continue
                got.append(line[6:])
                if sent_at is None and '"text":"' in line and '"text":""' not in line:
                    proc.send_signal(signal.SIGTERM)
                    sent_at = time.monotonic()
        assert sent_at is not None
        status = proc.wait(timeout=grace + 60)
        exited_after = time.monotonic() - sent_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    log = "".join(lines)
    assert got[-1] == "[DONE]", log
    assert json.loads(got[-2])["error"]["code"] == "server_shutting_down"
    assert 10 < len(got) < 1500  # it streamed through the grace period, then was cut
    assert status == 0, log
    assert exited_after < grace + 60
    assert "Traceback" not in log and "CancelledError" not in log and "Exception in ASGI" not in log, log
