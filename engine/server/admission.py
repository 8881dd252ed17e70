"""A bounded FIFO in front of the engine: at most max_running requests inside it, max_waiting queued, 429 beyond."""
from __future__ import annotations

import asyncio
import math
import time
from collections import deque

from engine.server.errors import APIError


class Ticket:
    """One request's claim on n slots, decided on arrival: granted at once, or a place in the queue."""

    def __init__(self, admission: "Admission", n: int, future: asyncio.Future | None) -> None:
        self.admission = admission
        self.n = n
        self.arrival = time.perf_counter()
        self._future = future
        self._released = False

    @property
    def granted(self) -> bool:
        return self._future is None or (self._future.done() and not self._future.cancelled())

    def grant(self) -> None:
        self._future.set_result(None)  # type: ignore[union-attr]

    async def wait(self) -> None:
        """Wait for the slots in arrival order (returns at once when they were free on arrival)."""
        if self._future is not None:
            await asyncio.shield(self._future)  # a cancelled waiter leaves through release(), not by cancelling

    def release(self) -> None:
        """Give the slots back, or leave the queue; safe to call more than once."""
        if self._released:
            return
        self._released = True
        if self.granted:
            self.admission.release(self.n)
        else:
            self._future.cancel()  # type: ignore[union-attr]
            self.admission.leave(self)


class Admission:
    """Slots are counted in engine requests (one per choice), so `n` = 4 takes four."""

    def __init__(self, max_running: int, max_waiting: int, retry_after_s: float = 1.0) -> None:
        if max_running < 1 or max_waiting < 0:
            raise ValueError("max_running must be >= 1 and max_waiting >= 0")
        self.max_running = max_running
        self.max_waiting = max_waiting
        self.retry_after_s = retry_after_s
        self.running = 0
        self._queue: deque[Ticket] = deque()

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def _fits(self, n: int) -> bool:
        # A request wider than the whole limit still runs, alone, rather than waiting forever.
        return self.running + n <= self.max_running or self.running == 0

    def enter(self, n: int = 1) -> Ticket:
        """Decide now, before any response starts: slots, a place in the queue, or a 429.

        Synchronous, so requests arriving together cannot all pass a check and then overfill the queue."""
        if not self._queue and self._fits(n):
            self.running += n
            return Ticket(self, n, None)
        if len(self._queue) >= self.max_waiting:
            raise APIError(429, f"the server is at capacity ({self.running} running, {len(self._queue)} waiting); "
                                f"retry later", code="queue_full",
                           headers={"Retry-After": str(max(1, math.ceil(self.retry_after_s)))})
        ticket = Ticket(self, n, asyncio.get_running_loop().create_future())
        self._queue.append(ticket)
        return ticket

    def leave(self, ticket: Ticket) -> None:
        if ticket in self._queue:
            self._queue.remove(ticket)
        self._grant()  # the head of the queue may have been waiting behind the one that left

    def release(self, n: int = 1) -> None:
        self.running -= n
        self._grant()

    def _grant(self) -> None:
        while self._queue and self._fits(self._queue[0].n):
            ticket = self._queue.popleft()
            self.running += ticket.n
            ticket.grant()
