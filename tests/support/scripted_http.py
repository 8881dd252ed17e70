"""The HTTP/1.1 side of the scripted server: one keep-alive connection, framing, error bodies."""
from __future__ import annotations

import asyncio
import json
from typing import Any

_MAX_HEADER_BYTES = 64 * 1024
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
           408: "Request Timeout", 409: "Conflict", 422: "Unprocessable Entity", 429: "Too Many Requests",
           431: "Request Header Fields Too Large", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable", 504: "Gateway Timeout"}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
               429: "rate_limit_error"}


def error_body(status: int, message: str) -> bytes:
    kind = ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": status}}).encode()


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection; requests are answered one at a time, in order."""

    def __init__(self, server: Any):  # a ScriptedServer: keeps _conns, answers via _serve
        self.server = server
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False
        self.closed = False
        self.task: asyncio.Task | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server._conns.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server._conns.discard(self)
        if self.task is not None:
            self.task.cancel()

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.busy:
            self.process()

    def process(self) -> None:
        while not self.busy and not self.closed:
            request = self._take_request()
            if request is None:
                return
            self.server._serve(self, *request)

    def _take_request(self) -> tuple[str, str, dict[str, str], bytes, bool] | None:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buf) > _MAX_HEADER_BYTES:
                self.send(431, error_body(431, "request headers too large"), keep_alive=False)
            return None
        lines = self.buf[:end].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if len(parts) != 3 or length < 0 or "chunked" in headers.get("transfer-encoding", ""):
            self.send(400, error_body(400, "unsupported or malformed HTTP request"), keep_alive=False)
            return None
        if len(self.buf) < end + 4 + length:
            return None
        body = bytes(self.buf[end + 4:end + 4 + length])
        del self.buf[:end + 4 + length]
        method, target, version = parts
        connection = headers.get("connection", "").lower()
        keep_alive = (version == "HTTP/1.1" and connection != "close") or connection == "keep-alive"
        return method, target, headers, body, keep_alive  # the server splits off the query

    def head(self, status: int, content_type: str, keep_alive: bool, length: int | None,
             extra: dict[str, str] | None = None) -> bytes:
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}", f"content-type: {content_type}"]
        lines.append(f"content-length: {length}" if length is not None else "transfer-encoding: chunked")
        for name, value in (extra or {}).items():
            lines.append(f"{name}: {value}")
        if not keep_alive:
            lines.append("connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def send(self, status: int, body: bytes, keep_alive: bool = True, content_type: str = "application/json",
             extra: dict[str, str] | None = None) -> None:
        if self.closed or self.transport is None:
            return
        self.transport.write(self.head(status, content_type, keep_alive, len(body), extra) + body)
        if not keep_alive:
            self.closed = True
            self.transport.close()

    def close(self) -> None:
        """Close after what was written has been sent."""
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        """Drop the connection at once, unsent data included (the injected fault)."""
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


def chunk(data: bytes) -> bytes:
    """One piece of a chunked transfer-encoded body."""
    return b"%x\r\n%s\r\n" % (len(data), data)
