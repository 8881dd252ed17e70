"""Graceful shutdown: after SIGTERM, running requests get a grace period; then their work is cut short.

Work that must end when the grace period does runs inside `Drain.bounded(...)`: an asyncio timeout that
the end of the grace period brings forward to "now". The code inside then sees a TimeoutError at its
current await and finishes on its own terms (an error event and [DONE], a 503), so uvicorn never has to
cancel a request task (which would log a CancelledError traceback).
"""
from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator


class Drain:
    """The server's shutdown state: `draining` once shutdown begins, `expired` once its grace period is over."""

    def __init__(self) -> None:
        self.draining = False
        self.expired = False
        self._deadlines: set[asyncio.Timeout] = set()

    def begin(self, grace_s: float) -> None:
        """Refuse new work from now on; cut the bounded work still running after `grace_s` seconds."""
        if self.draining:
            return
        self.draining = True
        asyncio.get_running_loop().call_later(max(0.0, grace_s), self._expire)

    def _expire(self) -> None:
        self.expired = True
        now = asyncio.get_running_loop().time()
        for deadline in list(self._deadlines):
            when = deadline.when()
            if not deadline.expired() and (when is None or when > now):
                deadline.reschedule(now)

    @contextlib.asynccontextmanager
    async def bounded(self, seconds: float | None = None) -> AsyncIterator[asyncio.Timeout]:
        """Run the block with a timeout of `seconds` (None: none of its own) that the end of the grace period
        also triggers; a hit raises TimeoutError out of the block (check `expired` to tell which)."""
        async with asyncio.timeout(seconds) as deadline:
            if self.expired:
                deadline.reschedule(asyncio.get_running_loop().time())
            self._deadlines.add(deadline)
            try:
                yield deadline
            finally:
                self._deadlines.discard(deadline)
