"""Connection shedding against a real server on 127.0.0.1: idle and trickling sockets are closed, and one client
address (or everyone together) cannot hold more connections than the caps allow."""
from __future__ import annotations

import socket
import time

import httpx

from engine.server.metrics import parse_metrics
from tests.server.conftest import fake_server
from tests.server.fake_engine import FakeEngine

ATTACKER = "127.0.0.2"  # Linux routes all of 127.0.0.0/8 to loopback: a second client address on this machine
CHAT = {"model": "fake", "messages": [{"role": "user", "content": "alpha beta"}], "max_tokens": 4}


def _connect(srv, source: str) -> socket.socket:
    sock = socket.create_connection((srv.host, srv.port), timeout=5, source_address=(source, 0))
    sock.settimeout(0.05)
    return sock


def _closed_by_server(sock: socket.socket) -> tuple[bool, bytes]:
    """(closed, what the server wrote before closing), without waiting."""
    got = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (socket.timeout, BlockingIOError):
            return False, got
        except ConnectionResetError:
            return True, got
        if not chunk:
            return True, got
        got += chunk


def _wait_closed(sock: socket.socket, timeout_s: float, trickle: bytes = b"") -> tuple[bool, bytes]:
    deadline, got = time.monotonic() + timeout_s, b""
    while time.monotonic() < deadline:
        if trickle:
            try:
                sock.send(trickle)  # one more byte of headers that never end
            except OSError:
                return True, got
        closed, more = _closed_by_server(sock)
        got += more
        if closed:
            return True, got
        time.sleep(0.05)
    return False, got


def _metrics(srv) -> dict[str, float]:
    return parse_metrics(httpx.get(srv.root_url + "/metrics", timeout=10).text)


def test_idle_and_trickling_sockets_from_one_address_are_capped_and_closed_while_others_are_served():
    # A header timeout long enough that the attacker's sockets are still open while the others are checked.
    with fake_server(FakeEngine(), header_timeout_s=5.0, keep_alive_timeout_s=5.0,
                     max_connections_per_client=8, max_connections=100) as srv:
        idle = [_connect(srv, ATTACKER) for _ in range(4)]
        trickling = [_connect(srv, ATTACKER) for _ in range(4)]
        for s in trickling:
            s.send(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        time.sleep(0.2)
        assert not any(_closed_by_server(s)[0] for s in idle + trickling)  # within the cap: taken
        # Past the per-address cap: answered 503 and closed at once.
        extra = [_connect(srv, ATTACKER) for _ in range(12)]
        for s in extra:
            closed, got = _wait_closed(s, 5)
            assert closed and got.startswith(b"HTTP/1.1 503") and b"per client address" in got
        # Another address is served meanwhile, on a connection it keeps alive.
        with httpx.Client(timeout=30) as client:
            r = client.post(srv.base_url + "/chat/completions", json=CHAT)
            assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"]
            m = parse_metrics(client.get(srv.root_url + "/metrics").text)  # on the same kept-alive connection
            assert m["harness_connections_refused_total"] == 12
            assert m["harness_connections_open"] == 9  # the attacker's 8 and this client's one
        # The held sockets are closed by the server: silent ones and those that trickle their headers.
        for s in trickling:
            closed, got = _wait_closed(s, 30, trickle=b"a")
            assert closed and got.startswith(b"HTTP/1.1 408"), got
        for s in idle:
            assert _wait_closed(s, 30)[0]
        m = _metrics(srv)
        assert m["harness_connections_header_timeouts_total"] == 8
        assert m["harness_connections_open"] <= 1  # (the scrape's own connection)
        # The address is welcome again once its sockets are gone.
        again = _connect(srv, ATTACKER)
        again.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        again.settimeout(5)
        assert again.recv(65536).startswith(b"HTTP/1.1 200")
        for s in idle + trickling + extra + [again]:
            s.close()


def test_an_idle_keep_alive_connection_is_closed_after_its_timeout():
    with fake_server(FakeEngine(), keep_alive_timeout_s=0.5, header_timeout_s=30.0) as srv:
        sock = _connect(srv, "127.0.0.1")
        sock.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sock.settimeout(0.05)
        closed, got = _wait_closed(sock, 15)
        assert closed and got == b""  # closed quietly, long before the 30 s header timeout
        sock.close()


def test_the_total_cap_refuses_new_connections_until_one_closes():
    with fake_server(FakeEngine(), header_timeout_s=30.0, max_connections=4, max_connections_per_client=100) as srv:
        held = [_connect(srv, f"127.0.0.{3 + i}") for i in range(4)]
        time.sleep(0.2)
        late = _connect(srv, "127.0.0.1")
        closed, got = _wait_closed(late, 5)
        assert closed and got.startswith(b"HTTP/1.1 503") and b"--max-connections" in got
        held.pop().close()
        time.sleep(0.2)
        r = httpx.get(srv.root_url + "/health", timeout=10)
        assert r.status_code == 200
        for s in held + [late]:
            s.close()
