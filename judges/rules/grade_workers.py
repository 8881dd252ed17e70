"""Grade records in worker processes under a per-sample limit enforced from outside the judge.

A worker that passes the limit on one sample is killed and replaced: that sample becomes
`judge_error` with the reason, the rest of its batch goes to the new worker, and grading goes on.
No pattern, present or future, can hold the stage: a run takes at most samples x limit / workers.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

from judges.base import Judge, JudgeConfigError, Verdict
from judges.rules import sympy_pool
from records import GenerationRecord

BATCH = 64  # records sent to a worker at once; results come back one by one, so the clock is per sample
LARGE_RUN = 2_000  # from this many records on, grade with every core; below it one worker starts faster
STARTUP_TIMEOUT_S = 60.0  # a fresh worker's start (and a sympy helper's) is never charged to a sample


def worker_count(records: int) -> int:
    """One worker for a small run; every core for a large one."""
    return 1 if records < LARGE_RUN else max(1, min(os.cpu_count() or 1, records // (LARGE_RUN // 2)))


def _safe_verdict(judge: Judge, record: GenerationRecord) -> Verdict:
    try:
        return judge.grade(record)
    except JudgeConfigError:
        raise
    except Exception as exc:  # a judge bug on one response must not lose the others' grades
        return Verdict(None, None, "judge_error", {"error": f"{type(exc).__name__}: {exc}"})


def _worker_main(judge: Judge, conn: Connection) -> None:
    """Grade each batch received, sending (index, verdict) per sample; a clock pause around helper starts."""
    if hasattr(os, "setpgrp"):
        os.setpgrp()  # its own process group, so stopping it also stops any sympy helper it started
    sympy_pool.forget_inherited()  # the parent's sympy helpers are its own, never shared across a fork
    sympy_pool.startup_hook = lambda starting: conn.send(("pause" if starting else "resume", None))
    conn.send(("ready", None))
    while True:
        batch = conn.recv()
        if batch is None:
            sympy_pool.shutdown()
            return
        for index, record in batch:
            try:
                conn.send(("done", (index, _safe_verdict(judge, record))))
            except JudgeConfigError as exc:
                conn.send(("config_error", str(exc)))
                return


@dataclass
class _Worker:
    """One grading process, the batch it holds, and when its current sample started."""

    process: mp.process.BaseProcess
    conn: Connection
    pending: deque[tuple[int, GenerationRecord]] = field(default_factory=deque)
    clock_from: float = 0.0
    limit_s: float = 0.0
    ready: bool = False

    def stop(self) -> None:
        if self.process.is_alive():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (AttributeError, OSError):  # no process groups here, or it has not made its own yet
                self.process.kill()
        self.process.join()
        self.conn.close()


class WorkerPool:
    """Grades (index, record) pairs with `workers` processes; each sample has limit_s from outside."""

    def __init__(self, judge: Judge, workers: int, limit_s: float) -> None:
        # fork: the worker inherits the judge and the imported modules, so it starts in milliseconds.
        self._ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.judge, self.limit_s = judge, limit_s
        self.workers = [self._start() for _ in range(max(1, workers))]

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=_worker_main, args=(self.judge, child), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent, clock_from=time.monotonic(), limit_s=STARTUP_TIMEOUT_S)

    def grade(self, items: Sequence[tuple[int, GenerationRecord]],
              on_done: Callable[[int], None] | None = None) -> dict[int, Verdict]:
        """A verdict for every index; a sample that passes the limit is judge_error with the reason."""
        queue = deque(list(items[i:i + BATCH]) for i in range(0, len(items), BATCH))
        out: dict[int, Verdict] = {}
        while len(out) < len(items):
            for w in self.workers:
                if w.ready and not w.pending and queue:
                    w.pending.extend(queue.popleft())
                    w.conn.send(list(w.pending))
                    w.clock_from, w.limit_s = time.monotonic(), self.limit_s
            now = time.monotonic()
            timeout = max(0.0, min(w.clock_from + w.limit_s - now for w in self.workers if w.pending or not w.ready))
            for conn in wait([w.conn for w in self.workers], timeout):
                self._receive(next(w for w in self.workers if w.conn is conn), out, queue, on_done)
            now = time.monotonic()
            for i, w in enumerate(self.workers):
                if (w.pending or not w.ready) and now - w.clock_from >= w.limit_s:
                    self._replace(i, out, queue, f"timed out after {w.limit_s:g} s (the grading worker was stopped)")
        return out

    def _receive(self, w: _Worker, out: dict[int, Verdict], queue: deque, on_done: Callable[[int], None] | None) -> None:
        try:
            kind, value = w.conn.recv()
        except (EOFError, OSError):
            w.process.join(5.0)  # reaped, so its exit code is known
            code = w.process.exitcode
            self._replace(self.workers.index(w), out, queue, f"the grading worker died (exit code {code})")
            return
        if kind == "ready":
            w.ready = True
        elif kind == "pause":
            w.limit_s = w.limit_s + STARTUP_TIMEOUT_S
        elif kind == "resume":
            w.clock_from, w.limit_s = time.monotonic(), self.limit_s
        elif kind == "config_error":
            self.close()
            raise JudgeConfigError(value)
        else:
            index, verdict = value
            out[index] = verdict
            w.pending.popleft()
            w.clock_from, w.limit_s = time.monotonic(), self.limit_s
            if on_done:
                on_done(index)

    def _replace(self, i: int, out: dict[int, Verdict], queue: deque, reason: str) -> None:
        """Kill worker i; its current sample gets the reason, the rest of its batch goes back to the queue."""
        w = self.workers[i]
        w.stop()
        if not w.ready:
            raise RuntimeError(f"a grading worker could not start: {reason}")
        if w.pending:
            index, _ = w.pending.popleft()
            out[index] = Verdict(None, None, "judge_error", {"error": reason})
            if w.pending:
                queue.appendleft(list(w.pending))
        self.workers[i] = self._start()

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(None)
            except OSError:
                pass
            w.stop()


def grade_in_workers(judge: Judge, items: Sequence[tuple[int, GenerationRecord]], limit_s: float,
                     on_done: Callable[[int], None] | None = None, workers: int | None = None) -> dict[int, Verdict]:
    """Verdicts by index for (index, record) pairs, graded in worker processes under limit_s per sample."""
    if not items:
        return {}
    pool = WorkerPool(judge, workers or worker_count(len(items)), limit_s)
    try:
        return pool.grade(items, on_done)
    finally:
        pool.close()
