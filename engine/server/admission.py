"""Fair admission in front of the engine: running sequences are shared between requests, max_waiting queued, 429 beyond.

A slot is one running sequence (one choice). A request holds at most `max_running_per_request` slots at once, and
each free slot goes to the request holding the fewest (oldest first), so one wide request (many prompts x n)
cannot keep a small one waiting for all of its sequences.
"""
from __future__ import annotations

import asyncio
import itertools
import math
import time

from engine.server.errors import APIError


class Ticket:
    """One request's claim on slots for its n choices, made on arrival; choices acquire slots one by one."""

    def __init__(self, admission: "Admission", n: int, order: int) -> None:
        self.admission = admission
        self.n = n
        self.order = order
        self.arrival = time.perf_counter()
        self.started: float | None = None  # when the first slot was granted
        self.held = 0  # slots held now (claimed by a running choice, or granted and not yet claimed)
        self.granted_total = 0  # slots granted so far; each choice gets one
        self._unclaimed = 0
        self._changed = asyncio.Event()
        self._released = False

    @property
    def granted(self) -> bool:
        """True once the request has started (its first slot was granted)."""
        return self.started is not None

    @property
    def wants_more(self) -> bool:
        return not self._released and self.granted_total < self.n

    def _grant_one(self) -> None:
        if self.started is None:
            self.started = time.perf_counter()
        self.held += 1
        self.granted_total += 1
        self._unclaimed += 1
        self._changed.set()

    async def wait(self) -> None:
        """Wait until the request has its first slot (at once when one was free on arrival)."""
        while not self.granted:
            self._changed.clear()
            await self._changed.wait()

    async def acquire(self) -> None:
        """Wait for one slot for one choice; give it back with `done_one()`."""
        while not self._unclaimed:
            self._changed.clear()
            await self._changed.wait()
        self._unclaimed -= 1

    def done_one(self) -> None:
        """A choice finished: its slot goes to whichever request is next in line."""
        if self._released or self.held <= self._unclaimed:
            return
        self.held -= 1
        self.admission.give_back(1)

    def release(self) -> None:
        """Give every slot back and leave the queue; safe to call more than once."""
        if self._released:
            return
        self._released = True
        self.admission.leave(self)


class Admission:
    """Slots are counted in engine requests (one per choice); requests queue in arrival order until their first slot."""

    def __init__(self, max_running: int, max_waiting: int, retry_after_s: float = 1.0,
                 max_running_per_request: int | None = None) -> None:
        if max_running < 1 or max_waiting < 0:
            raise ValueError("max_running must be >= 1 and max_waiting >= 0")
        self.max_running = max_running
        self.max_waiting = max_waiting
        self.retry_after_s = retry_after_s
        # Default: half the slots, so a request arriving next to a wide one finds room at once.
        self.per_request = max(1, min(max_running, max_running_per_request or max_running // 2))
        self.running = 0
        self._tickets: list[Ticket] = []  # requests with slots or waiting for them, in arrival order
        self._order = itertools.count()

    @property
    def waiting(self) -> int:
        """Requests that have not started yet."""
        return sum(1 for t in self._tickets if not t.granted)

    def enter(self, n: int = 1) -> Ticket:
        """Decide now, before any response starts: a first slot, a place in the queue, or a 429.

        Synchronous, so requests arriving together cannot all pass a check and then overfill the queue."""
        ticket = Ticket(self, n, next(self._order))
        queued = self.waiting
        self._tickets.append(ticket)
        self._grant()
        if not ticket.granted and queued >= self.max_waiting:
            self._tickets.remove(ticket)
            raise APIError(429, f"the server is at capacity ({self.running} running, {queued} waiting); "
                                f"retry later", code="queue_full",
                           headers={"Retry-After": str(max(1, math.ceil(self.retry_after_s)))})
        return ticket

    def give_back(self, n: int) -> None:
        self.running -= n
        self._grant()

    def leave(self, ticket: Ticket) -> None:
        if ticket in self._tickets:
            self._tickets.remove(ticket)
        self.running -= ticket.held
        ticket.held = 0
        self._grant()

    def _grant(self) -> None:
        while self.running < self.max_running:
            # Round-robin by need: the request holding the fewest slots first, then the oldest.
            best = min((t for t in self._tickets if t.wants_more and t.held < self.per_request),
                       key=lambda t: (t.held, t.order), default=None)
            if best is None:
                return
            self.running += 1
            best._grant_one()
