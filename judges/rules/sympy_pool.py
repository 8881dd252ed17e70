"""Killable sympy worker processes (judges.rules.equiv_worker), shared by math_equiv and the AIME reader.

Safe from any thread: no signals; a request that overruns its time limit has its worker killed and
raises WorkerTimeout. Workers start on first use and are reused.
"""
from __future__ import annotations

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
from collections.abc import Callable
from typing import Any

STARTUP_TIMEOUT_S = 60.0  # importing sympy in a fresh worker; never charged to a request
_ROOT = str(Path(__file__).resolve().parents[2])


class WorkerTimeout(Exception):
    """The worker did not answer within the request's time limit (it has been killed)."""


class WorkerUnavailable(Exception):
    """No worker could be started, or the worker died or answered garbage."""


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
        try:
            self._read_line(STARTUP_TIMEOUT_S)
        except (WorkerTimeout, WorkerUnavailable) as exc:
            self.kill()
            raise WorkerUnavailable("the sympy worker did not start") from exc

    def _read_line(self, timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerTimeout
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WorkerUnavailable("the sympy worker died")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise WorkerUnavailable("the sympy worker sent a garbled reply")
        return reply

    def ask(self, payload: dict[str, Any], timeout_s: float) -> dict:
        try:
            self.proc.stdin.write((json.dumps(payload) + "\n").encode())
        except (BrokenPipeError, OSError) as exc:
            raise WorkerUnavailable("the sympy worker died") from exc
        return self._read_line(timeout_s)

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

    def request(self, payload: dict[str, Any], timeout_s: float) -> dict:
        worker = self.slots.get()
        try:
            if worker is None or not worker.alive():
                if worker is not None:
                    worker.kill()  # reap the dead process and close its pipes
                worker = None  # so a failed start below leaves the slot empty
                worker = _started_worker()  # its startup is not charged to timeout_s
            return worker.ask(payload, timeout_s)
        except (WorkerTimeout, WorkerUnavailable):
            if worker is not None:
                worker.kill()  # a runaway simplify: the only safe stop is the process
            worker = None
            raise
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
# Called with True before a worker starts and False after: a grading process that runs under a clock
# kept by its parent (judges.rules.grade_workers) uses it so the sympy import is not charged to a sample.
startup_hook: Callable[[bool], None] | None = None


def _started_worker() -> _Worker:
    if startup_hook:
        startup_hook(True)
    try:
        return _Worker()
    finally:
        if startup_hook:
            startup_hook(False)


def forget_inherited() -> None:
    """In a forked child: drop the parent's workers without touching them (their pipes are the parent's)."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


def request(payload: dict[str, Any], timeout_s: float) -> dict:
    """Send one request to a worker and return its reply; raises WorkerTimeout or WorkerUnavailable."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _Pool(max(1, min(2, os.cpu_count() or 1)))
            atexit.register(_pool.close)
    return _pool.request(payload, timeout_s)


def shutdown() -> None:
    """Stop the worker processes (they restart on the next request)."""
    if _pool is not None:
        _pool.close()
