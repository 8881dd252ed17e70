"""A streaming OpenAI-compatible client that times one request: TTFT, inter-chunk gaps, tokens.

Tokens are counted from the server's usage (the final usage chunk, or per-chunk usage when the server
sends continuous usage stats), never from chunk counts unless the server gives no usage at all: with
speculative decoding a chunk may carry several tokens.
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class RequestResult:
    """One measured request (times in seconds from its own start)."""

    ok: bool
    start: float = 0.0  # perf_counter at send
    ttft_s: float | None = None
    e2e_s: float = 0.0
    output_tokens: int = 0
    prompt_tokens: int | None = None
    content_chunks: int = 0
    token_source: str = "usage"  # usage | chunks (server sent no usage)
    itl_s: list[float] = field(default_factory=list)  # gaps between content-bearing chunks
    parse_s: float = 0.0  # client time spent decoding and inspecting events
    error: str | None = None

    @property
    def tpot_s(self) -> float | None:
        """(E2E - TTFT) / (output tokens - 1); None with fewer than two tokens."""
        if self.ttft_s is None or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)


def _content(event: dict[str, Any], chat: bool) -> str:
    choices = event.get("choices") or []
    if not choices:
        return ""
    if chat:
        delta = choices[0].get("delta") or {}
        return (delta.get("content") or "") + (delta.get("reasoning_content") or "") + (delta.get("reasoning") or "")
    return choices[0].get("text") or ""


async def stream_request(client: httpx.AsyncClient, url: str, payload: dict[str, Any], chat: bool,
                         headers: dict[str, str] | None = None) -> RequestResult:
    """Send one streaming request and time it; faults come back as ok=False, never raised."""
    start = time.perf_counter()
    res = RequestResult(ok=False, start=start)
    last_content: float | None = None
    usage_tokens: int | None = None
    try:
        async with client.stream("POST", url, json=payload, headers=headers) as response:
            if response.status_code != 200:
                body = (await response.aread())[:300].decode("utf-8", "replace")
                res.error = f"HTTP {response.status_code}: {body}"
                res.e2e_s = time.perf_counter() - start
                return res
            async for line in response.aiter_lines():
                now = time.perf_counter()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                event = json.loads(data)
                if event.get("error"):
                    raise RuntimeError(f"server error in stream: {event['error']}")
                text = _content(event, chat)
                usage = event.get("usage")
                if usage:
                    usage_tokens = usage.get("completion_tokens", usage_tokens)
                    res.prompt_tokens = usage.get("prompt_tokens", res.prompt_tokens)
                if text:
                    if res.ttft_s is None:
                        res.ttft_s = now - start
                    else:
                        res.itl_s.append(now - last_content)  # type: ignore[operator]
                    last_content = now
                    res.content_chunks += 1
                res.parse_s += time.perf_counter() - now
        res.e2e_s = time.perf_counter() - start  # to the end of the stream, as the user waits
        if usage_tokens is None:
            res.token_source, res.output_tokens = "chunks", res.content_chunks
        else:
            res.output_tokens = int(usage_tokens)
        res.ok = res.ttft_s is not None
        if not res.ok:
            res.error = "stream ended without any content"
    except (httpx.HTTPError, json.JSONDecodeError, RuntimeError, asyncio.TimeoutError) as exc:
        res.error = f"{type(exc).__name__}: {exc}"
        res.e2e_s = time.perf_counter() - start
    return res


class LoopLagMonitor:
    """Measures how late the event loop wakes up: a busy client delays every timestamp it takes."""

    def __init__(self, interval_s: float = 0.005) -> None:
        self.interval_s = interval_s
        self.lags_s: list[float] = []
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(self.interval_s)
            self.lags_s.append(max(0.0, time.perf_counter() - t0 - self.interval_s))

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
