"""math_equiv: are two math answers the same? Exact fast path here, sympy in killable worker processes.

Safe from any thread: no signals; a comparison that overruns its timeout has its worker killed
and answers None. Workers start on first use and are reused.
"""
from __future__ import annotations

import asyncio
import atexit
import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

from judges.rules.latex import clean
from judges.rules.numbers import exact_value

MAX_INPUT_CHARS = 500  # longer "answers" are prose; deciding them is not this function's job
DEFAULT_TIMEOUT_S = 5.0
STARTUP_TIMEOUT_S = 60.0  # importing sympy in a fresh worker; not charged to a comparison
_ROOT = str(Path(__file__).resolve().parents[2])


class _Worker:
    """One child process running judges.rules.equiv_worker, spoken to over pipes."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = _ROOT + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "judges.rules.equiv_worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, bufsize=0,
        )
        self._buf = b""
        if self._read_line(STARTUP_TIMEOUT_S) is None:
            self.kill()
            raise RuntimeError("math_equiv worker did not start")

    def _read_line(self, timeout_s: float) -> dict | None:
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None  # the worker died
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            return None  # a garbled reply: treated like a dead worker
        return reply if isinstance(reply, dict) else None

    def ask(self, a: str, b: str, timeout_s: float) -> tuple[bool, bool | None]:
        """(answered, result); answered is False when the worker overran or died."""
        try:
            self.proc.stdin.write((json.dumps({"a": a, "b": b}) + "\n").encode())
        except (BrokenPipeError, OSError):
            return False, None
        reply = self._read_line(timeout_s)
        return (False, None) if reply is None else (True, reply.get("result"))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe:
                pipe.close()


class _Pool:
    """A fixed number of worker slots; a caller borrows one, so each worker serves one thread at a time."""

    def __init__(self, size: int) -> None:
        # Last in, first out: a warm worker is reused before an empty slot starts a new process.
        self.slots: queue.LifoQueue[_Worker | None] = queue.LifoQueue()
        for _ in range(size):
            self.slots.put(None)
        self.size = size

    def compare(self, a: str, b: str, timeout_s: float) -> bool | None:
        worker = self.slots.get()
        try:
            if worker is None or not worker.alive():
                worker = _Worker()
            answered, result = worker.ask(a, b, timeout_s)
            if not answered:
                worker.kill()  # a runaway simplify: the only safe stop is the process
                worker = None
            return result
        except RuntimeError:
            worker = None
            return None
        finally:
            self.slots.put(worker)

    def close(self) -> None:
        for _ in range(self.size):
            worker = self.slots.get()
            if worker is not None:
                worker.kill()
            self.slots.put(None)


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def _get_pool() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _Pool(max(1, min(2, os.cpu_count() or 1)))
            atexit.register(_pool.close)
        return _pool


def shutdown() -> None:
    """Stop the worker processes (they restart on the next call)."""
    if _pool is not None:
        _pool.close()


def math_equiv(a: str, b: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bool | None:
    """True/False when a and b are decidably equal/different math answers; None when undecidable in time.

    Sets compare in any order, tuples in order, "\\pm" is a set of two values, decimals are exact
    ("0.5" equals "1/2", "0.333" does not equal "1/3"); no numeric tolerance anywhere.
    """
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    if len(a) > MAX_INPUT_CHARS or len(b) > MAX_INPUT_CHARS:
        return None
    ca, cb = clean(a), clean(b)
    if not ca or not cb:
        return None
    if ca.replace(" ", "") == cb.replace(" ", ""):
        return True
    va, vb = exact_value(ca), exact_value(cb)
    if va is not None and vb is not None:
        return va == vb
    return _get_pool().compare(a, b, timeout_s)


async def amath_equiv(a: str, b: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bool | None:
    """math_equiv for async judges: the wait happens in a thread, so the event loop keeps serving."""
    return await asyncio.to_thread(math_equiv, a, b, timeout_s)
