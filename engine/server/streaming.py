"""The SSE response: owns the request's admission ticket, stops when the client leaves, and ends cleanly at shutdown."""
from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncGenerator

from starlette.responses import Response

from engine.server.admission import Ticket
from engine.server.errors import error_body
from engine.server.shutdown import Drain

SHUTDOWN_MESSAGE = "the server is shutting down; the request was stopped before it finished"


def sse_event(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


SSE_DONE = b"data: [DONE]\n\n"


async def wait_disconnect(receive: Any) -> None:
    """Return once the client has gone away (the request body was already read)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


class EventStreamResponse(Response):
    """Streams `body` (SSE frames). On client disconnect the body is closed (its cleanup aborts the engine
    requests); when the shutdown grace period ends, the stream gets an error event and [DONE] instead."""

    media_type = "text/event-stream"

    def __init__(self, body: AsyncGenerator[bytes, None], ticket: Ticket, drain: Drain,
                 headers: dict[str, str] | None = None) -> None:
        self.body_iterator = body
        self.ticket = ticket
        self.drain = drain
        self.status_code = 200
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            pump = asyncio.ensure_future(self._pump(send))
            watcher = asyncio.ensure_future(wait_disconnect(receive))
            try:
                await asyncio.wait({pump, watcher}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                watcher.cancel()
                pump.cancel()  # a no-op when it finished; otherwise the client left
                outcome = (await asyncio.gather(pump, return_exceptions=True))[0]
            if isinstance(outcome, TimeoutError) and self.drain.expired:
                await self.body_iterator.aclose()  # abort the engine requests before saying so
                end = sse_event(error_body(503, SHUTDOWN_MESSAGE, code="server_shutting_down")) + SSE_DONE
                await send({"type": "http.response.body", "body": end, "more_body": False})
            elif isinstance(outcome, Exception):
                raise outcome
        finally:
            await self.body_iterator.aclose()
            self.ticket.release()

    async def _pump(self, send: Any) -> None:
        async with self.drain.bounded():
            async for chunk in self.body_iterator:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
