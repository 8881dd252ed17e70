"""Grade records in worker processes under a per-sample limit enforced from outside the judge.

A worker that passes the limit on one sample is killed and replaced: that sample becomes
`judge_error` with the reason, the rest of its batch goes to the new worker, and grading goes on.
No pattern, present or future, can hold the stage: a run takes at most samples x limit / workers.

Workers are forked after the records are loaded, so they inherit them and only index ranges travel
to a worker. Verdicts come back in groups (at least every FLUSH_S and at the end of each batch). The
per-sample clock lives in shared memory: each worker writes the position it is on and when its clock
started; the parent reads both and kills a worker only when its clock passes the limit.
"""
from __future__ import annotations

import gc
import mmap
import multiprocessing as mp
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from judges.base import Judge, JudgeConfigError, Verdict
from judges.rules import sympy_pool
from records import GenerationRecord

BATCH = 512  # positions handed to a worker at once (a range: the worker holds the records already)
FLUSH_S = 0.2  # a worker sends the verdicts it holds at least this often (limit / 10 if less); see CLOCK below
LARGE_RUN = 2_000  # from this many records on, grade with every core; below it one worker starts faster
STARTUP_TIMEOUT_S = 60.0  # a fresh worker's start (and a sympy helper's) is never charged to a sample

# A worker's shared slot: the position it is grading, and when its clock started. The clock restarts
# whenever the worker has sent every verdict it holds, so it counts the current sample plus the unsent
# verdicts before it (under FLUSH_S of work, by the flush rule). A killed worker's unsent verdicts are
# graded again by its replacement, and the time they took was inside the killed sample's limit: each
# sample costs at most the limit, so a run still takes at most samples x limit / workers.
POSITION, CLOCK = 0, 1


def usable_cores() -> int:
    """Cores this process may run on (taskset, cgroup cpusets), not every core of the machine."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def worker_count(records: int) -> int:
    """One worker for a small run; every usable core for a large one."""
    return 1 if records < LARGE_RUN else max(1, min(usable_cores(), records // (LARGE_RUN // 2)))


def _safe_verdict(judge: Judge, record: GenerationRecord) -> Verdict:
    try:
        return judge.grade(record)
    except JudgeConfigError:
        raise
    except Exception as exc:  # a judge bug on one response must not lose the others' grades
        return Verdict(None, None, "judge_error", {"error": f"{type(exc).__name__}: {exc}"})


def _worker_main(judge: Judge, items: Sequence[tuple[int, GenerationRecord]], conn: Connection, slot,
                 flush_s: float) -> None:
    """Grade each range of positions received; send (position after the last, verdicts) in groups."""
    if hasattr(os, "setpgrp"):
        os.setpgrp()  # its own process group, so stopping it also stops any sympy helper it started
    gc.freeze()  # the inherited records stay out of collections, so their pages are not copied for nothing
    sympy_pool.forget_inherited()  # the parent's sympy helpers are its own, never shared across a fork
    held: list[tuple] = []  # (index, *verdict fields): plain tuples pickle ~6x faster than Verdict objects

    def flush(upto: int) -> None:
        if held:
            conn.send(("done", (upto, held[:])))
            held.clear()
        slot[CLOCK] = time.monotonic()

    def on_helper_start(starting: bool) -> None:
        if starting:  # send what is held, then stop the clock while the helper imports sympy
            flush(int(slot[POSITION]))
            slot[CLOCK] = time.monotonic() + STARTUP_TIMEOUT_S
        else:
            slot[CLOCK] = time.monotonic()

    sympy_pool.startup_hook = on_helper_start
    conn.send(("ready", None))
    while True:
        batch = conn.recv()
        if batch is None:
            sympy_pool.shutdown()
            return
        start, stop = batch
        for position in range(start, stop):
            slot[POSITION] = position
            index, record = items[position]
            try:
                v = _safe_verdict(judge, record)
            except JudgeConfigError as exc:
                conn.send(("config_error", str(exc)))
                return
            held.append((index, v.correct, v.extracted, v.status, v.detail))
            if time.monotonic() - slot[CLOCK] >= flush_s:
                flush(position + 1)
        flush(stop)


@dataclass
class _Worker:
    """One grading process, its shared slot, and the range of positions it holds and has not reported."""

    process: mp.process.BaseProcess
    conn: Connection
    slot: Any  # two shared doubles, POSITION and CLOCK: a memoryview (fork) or a RawArray (spawn)
    started: float
    ready: bool = False
    next: int = 0  # first position of its batch whose verdict has not come back
    stop_at: int = 0  # end of its batch; next == stop_at when it holds nothing
    heard: float = 0.0  # when the parent last received from it (a slow parent never counts against a sample)

    @property
    def busy(self) -> bool:
        return self.next < self.stop_at

    def deadline(self, limit_s: float) -> float:
        if not self.ready:
            return self.started + STARTUP_TIMEOUT_S
        return max(self.slot[CLOCK], self.heard) + limit_s

    def kill(self) -> None:
        """Stop the process and its group (any sympy helper too); its pipe stays open to be read out."""
        if self.process.is_alive():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (AttributeError, OSError):  # no process groups here, or it has not made its own yet
                self.process.kill()
        self.process.join()

    def stop(self) -> None:
        self.kill()
        self.conn.close()


class WorkerPool:
    """Grades (index, record) pairs with `workers` processes; each sample has limit_s from outside."""

    def __init__(self, judge: Judge, items: Sequence[tuple[int, GenerationRecord]], workers: int,
                 limit_s: float) -> None:
        # fork: the worker inherits the judge, the records and the imported modules, so it starts in
        # milliseconds and nothing but positions and verdicts crosses the pipe.
        self._ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.judge, self.items, self.limit_s = judge, items, limit_s
        self.on_done: Callable[[int], None] | None = None
        self.workers = [self._start() for _ in range(max(1, workers))]

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe()
        slot = _shared_doubles(2) if self._ctx.get_start_method() == "fork" else self._ctx.RawArray("d", 2)
        # held verdicts count against the current sample's clock: send them well within the limit
        flush_s = min(FLUSH_S, self.limit_s / 10)
        process = self._ctx.Process(target=_worker_main, args=(self.judge, self.items, child, slot, flush_s),
                                    daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent, slot, started=time.monotonic())

    def grade(self, on_done: Callable[[int], None] | None = None) -> dict[int, Verdict]:
        """A verdict for every item; a sample that passes the limit is judge_error with the reason."""
        n, self.on_done = len(self.items), on_done
        queue: deque[tuple[int, int]] = deque((i, min(i + BATCH, n)) for i in range(0, n, BATCH))
        out: dict[int, Verdict] = {}
        while len(out) < n:
            for w in self.workers:
                if w.ready and not w.busy and queue:
                    w.next, w.stop_at = queue.popleft()
                    # position -1 until the worker starts on it: a worker lost before that blames no sample
                    w.slot[POSITION], w.slot[CLOCK] = -1, time.monotonic()
                    try:
                        w.conn.send((w.next, w.stop_at))
                    except OSError:
                        pass  # it died: wait() below sees the closed pipe and replaces it
            waiting = [w.deadline(self.limit_s) for w in self.workers if w.busy or not w.ready]
            if not waiting and not queue:  # a bug here must fail loudly, never wait forever
                raise RuntimeError(f"grading lost track of {n - len(out)} sample(s)")
            timeout = max(0.0, min(waiting) - time.monotonic()) if waiting else None
            for conn in wait([w.conn for w in self.workers], timeout):
                w = next(w for w in self.workers if w.conn is conn)
                if not self._receive(w, out):
                    w.process.join(5.0)  # reaped, so its exit code is known
                    self._replace(w, out, queue, f"the grading worker died (exit code {w.process.exitcode})")
            now = time.monotonic()
            for w in list(self.workers):
                if (w.busy or not w.ready) and now >= w.deadline(self.limit_s):
                    self._replace(w, out, queue, f"timed out after {self.limit_s:g} s (the grading worker was stopped)")
        return out

    def _receive(self, w: _Worker, out: dict[int, Verdict]) -> bool:
        """Take one message from w; False when it has gone (died or was stopped)."""
        try:
            kind, value = w.conn.recv()
        except (EOFError, OSError):
            return False
        w.heard = time.monotonic()
        if kind == "ready":
            w.ready = True
        elif kind == "config_error":
            self.close()
            raise JudgeConfigError(value)
        else:
            upto, verdicts = value
            for index, *fields in verdicts:
                out[index] = Verdict(*fields)
            w.next = upto
            if self.on_done:
                self.on_done(len(verdicts))
        return True

    def _replace(self, w: _Worker, out: dict[int, Verdict], queue: deque, reason: str) -> None:
        """Kill w; the sample it was on gets the reason, the rest of its batch goes back to the queue."""
        w.kill()
        if not w.ready:
            w.conn.close()
            raise RuntimeError(f"a grading worker could not start: {reason}")
        while w.busy and _readable(w.conn):  # verdicts sent before it stopped still count
            if not self._receive(w, out):
                break
        w.conn.close()
        if w.busy:
            position = int(w.slot[POSITION])
            if w.next <= position < w.stop_at:
                out[self.items[position][0]] = Verdict(None, None, "judge_error", {"error": reason})
                if self.on_done:
                    self.on_done(1)
                if position + 1 < w.stop_at:
                    queue.appendleft((position + 1, w.stop_at))
                if w.next < position:  # verdicts it had not sent yet: graded again by the replacement
                    queue.appendleft((w.next, position))
            else:
                queue.appendleft((w.next, w.stop_at))
        self.workers[self.workers.index(w)] = self._start()

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(None)
            except OSError:
                pass
            w.stop()


def _shared_doubles(n: int) -> memoryview:
    """n doubles in anonymous shared memory that a forked child shares: no file behind it, so a size limit
    on files (RLIMIT_FSIZE) or a full /dev/shm cannot stop grading, as it would multiprocessing's RawArray."""
    return memoryview(mmap.mmap(-1, 8 * n)).cast("d")


def _readable(conn: Connection) -> bool:
    try:
        return conn.poll(0)
    except (EOFError, OSError):
        return False


def grade_in_workers(judge: Judge, items: Sequence[tuple[int, GenerationRecord]], limit_s: float,
                     on_done: Callable[[int], None] | None = None, workers: int | None = None) -> dict[int, Verdict]:
    """Verdicts by index for (index, record) pairs, graded in worker processes under limit_s per sample.

    on_done(n) is called as each group of n verdicts comes back.
    """
    if not items:
        return {}
    pool = WorkerPool(judge, items, workers or worker_count(len(items)), limit_s)
    try:
        return pool.grade(on_done)
    finally:
        pool.close()
