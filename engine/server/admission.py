"""A bounded FIFO in front of the engine: at most max_running requests inside it, max_waiting queued, 429 beyond."""
from __future__ import annotations

import asyncio
import math
from collections import deque

from engine.server.errors import APIError


class Admission:
    """Slots are counted in engine requests (one per choice), so `n` = 4 takes four."""

    def __init__(self, max_running: int, max_waiting: int, retry_after_s: float = 1.0) -> None:
        if max_running < 1 or max_waiting < 0:
            raise ValueError("max_running must be >= 1 and max_waiting >= 0")
        self.max_running = max_running
        self.max_waiting = max_waiting
        self.retry_after_s = retry_after_s
        self.running = 0
        self._queue: deque[tuple[int, asyncio.Future]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def _fits(self, n: int) -> bool:
        # A request wider than the whole limit still runs, alone, rather than waiting forever.
        return self.running + n <= self.max_running or self.running == 0

    def check(self) -> None:
        """Refuse now (before any response starts) when a new request could not even queue."""
        if (self._queue or not self._fits(1)) and len(self._queue) >= self.max_waiting:
            raise APIError(429, f"the server is at capacity ({self.running} running, {len(self._queue)} waiting); "
                                f"retry later", code="queue_full",
                           headers={"Retry-After": str(max(1, math.ceil(self.retry_after_s)))})

    async def acquire(self, n: int = 1) -> None:
        """Wait for n slots in arrival order; a cancelled waiter leaves the queue."""
        if not self._queue and self._fits(n):
            self.running += n
            return
        self.check()
        fut = asyncio.get_running_loop().create_future()
        entry = (n, fut)
        self._queue.append(entry)
        try:
            await fut
        except BaseException:
            if entry in self._queue:
                self._queue.remove(entry)
            elif fut.done() and not fut.cancelled():
                self.release(n)  # granted just as we were cancelled: hand the slots on
            raise

    def release(self, n: int = 1) -> None:
        self.running -= n
        while self._queue and self._fits(self._queue[0][0]):
            k, fut = self._queue.popleft()
            if fut.done():
                continue
            self.running += k
            fut.set_result(None)
