"""Connection-level shedding that uvicorn lacks: a header deadline and caps on open connections.

uvicorn closes an idle keep-alive connection after `timeout_keep_alive`, but never a fresh connection that
sends nothing or trickles its headers, and it has no cap per client address. These live in the protocol
(below the ASGI app), because a connection that never completes its headers never reaches the app.
"""
from __future__ import annotations

import asyncio
import json
import resource
from collections import Counter
from dataclasses import dataclass
from typing import Any

from engine.server.errors import error_body

# Written straight to the socket: no request was parsed, so there is nothing for the app to answer.
_TOO_MANY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
             b"content-length: %d\r\n\r\n%s")
_HEADER_TIMEOUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
                   b"content-length: %d\r\n\r\n%s")


def default_max_connections(wanted: int = 2048, reserve: int = 128) -> int:
    """`wanted`, or fewer when the open-file limit is lower: past that limit accept() fails for everyone."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(16, min(wanted, soft - reserve))


@dataclass
class ConnectionLimits:
    """Per-server connection limits (see docs/server.md, "Connections")."""

    header_timeout_s: float = 10.0  # a request's headers must be complete this long after its first byte
    keep_alive_timeout_s: float = 30.0  # an idle keep-alive connection is closed after this long
    max_connections: int = 2048  # open connections in total
    max_connections_per_client: int = 256  # open connections from one client address


class ConnectionTracker:
    """Open connections counted per client address; touched only from the event loop."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.by_address: Counter[str] = Counter()
        self.total = 0
        self.refused = 0
        self.header_timeouts = 0

    def refusal(self, address: str) -> str | None:
        """Why a new connection from `address` is refused, or None to take it."""
        if self.total >= self.limits.max_connections:
            return f"the server has {self.total} open connections, its limit (--max-connections)"
        if self.by_address[address] >= self.limits.max_connections_per_client:
            return (f"{address} has {self.by_address[address]} open connections, the limit per client address "
                    f"(--max-connections-per-client)")
        return None

    def opened(self, address: str) -> None:
        self.by_address[address] += 1
        self.total += 1

    def closed(self, address: str) -> None:
        self.by_address[address] -= 1
        if self.by_address[address] <= 0:
            del self.by_address[address]
        self.total -= 1


def _error_bytes(template: bytes, status: int, message: str) -> bytes:
    body = json.dumps(error_body(status, message, None)).encode()
    return template % (len(body), body)


def guarded_protocol(base: type[asyncio.Protocol], tracker: ConnectionTracker) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's HTTP protocol class `base` (h11 or httptools) that enforces `tracker`'s limits."""

    class GuardedProtocol(base):  # type: ignore[misc, valid-type]
        _address: str | None = None
        _header_timer: asyncio.TimerHandle | None = None
        _cycle_at_arm: Any = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else "unknown"
            reason = tracker.refusal(address)
            if reason is not None:
                tracker.refused += 1
                transport.write(_error_bytes(_TOO_MANY, 503, f"too many connections: {reason}"))
                transport.close()
                return
            self._address = address
            tracker.opened(address)
            self._arm_header_timer()  # a fresh connection owes its first request's headers

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._arm_header_timer()  # first bytes of a new request on a kept-alive connection
            super().data_received(data)
            if self._header_timer is not None and self.cycle is not None and self.cycle is not self._cycle_at_arm:
                self._disarm_header_timer()  # the headers are complete: the body has its own deadline in the app

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            if self._address is not None:
                tracker.closed(self._address)
                self._address = None
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            self._cycle_at_arm = self.cycle
            self._header_timer = self.loop.call_later(tracker.limits.header_timeout_s, self._header_timed_out)

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_timed_out(self) -> None:
            self._header_timer = None
            if self.transport.is_closing():
                return
            tracker.header_timeouts += 1
            limit = tracker.limits.header_timeout_s
            self.transport.write(_error_bytes(_HEADER_TIMEOUT, 408,
                                              f"the request headers did not arrive within {limit:g} s"))
            self.transport.close()

    GuardedProtocol.__name__ = f"Guarded{base.__name__}"
    return GuardedProtocol


def protocol_class(http: str) -> type[asyncio.Protocol]:
    """uvicorn's protocol class for `http` ("auto", "h11", "httptools"), as uvicorn itself resolves it."""
    if http == "auto":
        from uvicorn.protocols.http.auto import AutoHTTPProtocol
        return AutoHTTPProtocol
    if http == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol
        return H11Protocol
    if http == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
        return HttpToolsProtocol
    raise ValueError(f"unknown http implementation {http!r}")
