"""The hot path of a non-streamed chat request: one aiohttp POST, no SDK request machinery.

Profiled at concurrency 256 against an instant server (benchmarks/bench_harness.py, docs/performance.md),
the openai SDK spent more client CPU building each request (options models, deep copies, URL parsing,
httpx wrappers around aiohttp) than aiohttp spent sending it. This path posts the JSON body straight
through an aiohttp session with the same headers, query, timeouts and connection limits, and turns
HTTP errors into the same Fault the SDK path produces. Streaming and /models stay on the SDK client.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

from engine.openai.endpoints import split_base_url
from engine.openai.faults import RETRYABLE_4XX, Fault, parse_retry_after


class FaultError(Exception):
    """An attempt that failed in a way already classified (an HTTP error status, a timeout)."""

    def __init__(self, fault: Fault):
        super().__init__(fault.describe())
        self.fault = fault


def status_fault(status: int, body: bytes, headers: Any, reason: str | None) -> Fault:
    """The Fault for a non-2xx reply, read as the SDK path reads it (the server's error message)."""
    message = ""
    try:
        data = json.loads(body)
        inner = data.get("error", data) if isinstance(data, dict) else data
        message = str(inner["message"]) if isinstance(inner, dict) and inner.get("message") else (
            inner if isinstance(inner, str) else "")
    except ValueError:
        pass
    message = message or body[:300].decode("utf-8", "replace") or reason or "no message"
    retry_after = parse_retry_after(headers)
    if status == 429:
        return Fault("rate_limited", message, status, True, retry_after)
    if status >= 500:
        return Fault("server_error", message, status, True, retry_after)
    return Fault("client_error", message, status, status in RETRYABLE_4XX, retry_after)


class RawSession:
    """One aiohttp session for one base URL, bound to the running event loop (as the SDK clients are)."""

    def __init__(self, url: str, api_key: str, timeout_s: float, max_connections: int, keepalive_s: float,
                 ssl_context: Any):
        import aiohttp

        base = split_base_url(url)
        kwargs = base.client_kwargs()
        self.base = base.public
        self.params = kwargs.get("default_query")
        self.headers = {"Content-Type": "application/json", "Accept": "application/json",
                        "Authorization": f"Bearer {api_key}", **kwargs.get("default_headers", {})}
        self.timeout = aiohttp.ClientTimeout(total=timeout_s, connect=min(timeout_s, 30.0))
        connector = aiohttp.TCPConnector(limit=max_connections, keepalive_timeout=keepalive_s, ssl=ssl_context)
        self._client_error = aiohttp.ClientError
        self.session = aiohttp.ClientSession(connector=connector, timeout=self.timeout,
                                             skip_auto_headers=("User-Agent",))

    async def post(self, path: str, body: dict[str, Any]) -> bytes:
        """POST a JSON body; the reply body on 2xx, else FaultError. Connection errors propagate (classify)."""
        try:
            async with self.session.post(self.base + path, data=json.dumps(body).encode(), headers=self.headers,
                                         params=self.params) as response:
                content = await response.read()
                if response.status >= 300:
                    raise FaultError(status_fault(response.status, content, response.headers, response.reason))
                return content
        except asyncio.TimeoutError as exc:
            if isinstance(exc, self._client_error):  # connect and socket timeouts: classify() reads them
                raise
            raise FaultError(Fault("timeout", "no reply within the request timeout")) from None

    async def close(self) -> None:
        await self.session.close()
