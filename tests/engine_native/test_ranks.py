"""The rank layer (engine.native.ranks): the tp/ep rules, torchrun's environment, and the call loop by which
rank 0 drives the other ranks, checked in one process and across two gloo processes on 127.0.0.1."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from engine.base import EngineError
from engine.native import ranks
from engine.native.ranks import (ParallelError, ParallelGroup, backend_for, check_parallel, launched,
                                 rank_device_name, serve_calls)
from tests.engine_native.test_tensor_parallel import ROOT, _free_port


@pytest.mark.parametrize("tp,ep,dpa,world,want", [
    (1, 1, False, None, (1, "tp")),
    (2, 1, False, None, (2, "tp")),
    (1, 4, True, None, (4, "ep")),
    (2, 1, False, 2, (2, "tp")),
    (1, 1, False, 4, (1, "tp")),  # one engine per rank (the sweeps' data parallelism): any world size
])
def test_check_parallel_gives_the_engine_size_and_mode(tp, ep, dpa, world, want):
    assert check_parallel(tp, ep, dpa, world) == want


@pytest.mark.parametrize("tp,ep,dpa,world,message", [
    (2, 2, False, None, "--tp 2 and --ep 2 together are not supported"),
    (1, 1, True, None, "--dp-attention splits requests over expert-parallel ranks; it needs --ep 2"),
    (2, 1, True, None, "it needs --ep 2 or more"),
    (0, 1, False, None, "--tp must be >= 1, got 0"),
    (1, -1, False, None, "--ep must be >= 1, got -1"),
    (2, 1, False, 1, "--tp 2 (a sweep's [parallel] tp = 2) needs 2 processes, but WORLD_SIZE is 1; launch with "
                     "`torchrun --nproc-per-node 2"),
    (1, 4, False, 2, "needs 4 processes, but WORLD_SIZE is 2; launch with `torchrun --nproc-per-node 4"),
])
def test_check_parallel_refuses_what_cannot_run(tp, ep, dpa, world, message):
    with pytest.raises(ParallelError) as info:
        check_parallel(tp, ep, dpa, world)
    assert message in str(info.value)
    # the engine reports EngineError and the command line ValueError: one error is both
    assert isinstance(info.value, EngineError) and isinstance(info.value, ValueError)


def test_launch_comes_from_torchrun_environment(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert launched().rank == 0 and launched().world_size == 1 and launched().is_main
    monkeypatch.setenv("RANK", "5")
    monkeypatch.setenv("WORLD_SIZE", "8")
    monkeypatch.setenv("LOCAL_RANK", "1")
    got = launched()
    assert (got.rank, got.world_size, got.local_rank, got.is_main) == (5, 8, 1, False)


def test_backend_and_device_per_rank():
    assert [backend_for(d) for d in ("cpu", "cuda:1", "npu")] == ["gloo", "nccl", "hccl"]
    with pytest.raises(EngineError, match="no backend for device 'mps'"):
        backend_for("mps")
    assert rank_device_name("cuda", 3) == "cuda:3" and rank_device_name("npu:0", 2) == "npu:2"
    assert rank_device_name("cpu", 3) == "cpu"


class _Recorder:
    def __init__(self):
        self.log = []

    def add(self, a, b):
        self.log.append(("add", a, b))

    def fail(self):
        raise RuntimeError("connection reset by peer")


class _Inbox:
    """Stands in for a ParallelGroup on a worker: rank 0's messages, already queued."""

    rank = 1

    def __init__(self, messages):
        self.messages, self.left = list(messages), None

    def receive(self):
        message = self.messages.pop(0)
        if isinstance(message, Exception):
            raise message
        return message

    def leave(self, wait=True):
        self.left = "after a barrier" if wait else "without waiting"


def test_a_worker_runs_each_call_by_name_until_rank_0_says_stop():
    runner, inbox = _Recorder(), _Inbox([("add", (1, 2)), ("add", ("x", None)), None, ("add", (9, 9))])
    assert serve_calls(inbox, runner) == 0
    assert runner.log == [("add", 1, 2), ("add", "x", None)] and inbox.left == "after a barrier"
    assert inbox.messages == [("add", (9, 9))]  # nothing after the stop is read


def test_a_failed_call_ends_the_worker_naming_its_rank_and_its_groups():
    inbox = _Inbox([("fail", ()), None])
    with pytest.raises(EngineError, match=r"tensor parallel rank 1: a step failed \(RuntimeError: connection reset"):
        serve_calls(inbox, _Recorder())
    assert inbox.left == "without waiting"  # no barrier with a peer that may be gone, but no group left at exit


def test_a_worker_that_lost_rank_0_leaves_its_groups_without_waiting():
    inbox = _Inbox([("add", (1, 2)), EngineError("tensor parallel rank 1: lost rank 0")])
    with pytest.raises(EngineError, match="lost rank 0"):
        serve_calls(inbox, _Recorder())
    assert inbox.left == "without waiting"


class _FakeDist:
    """torch.distributed as ParallelGroup.leave sees it: records barriers and destroys."""

    def __init__(self, barrier_error=None):
        self.calls, self.initialized, self.barrier_error = [], True, barrier_error

    def is_initialized(self):
        return self.initialized

    def barrier(self, group=None):
        self.calls.append(("barrier", group))
        if self.barrier_error:
            raise self.barrier_error

    def destroy_process_group(self, group=None):
        self.calls.append(("destroy", group or "default"))
        self.initialized = self.initialized and group is not None


@pytest.mark.parametrize("wait,barrier_error,want", [
    (True, None, [("barrier", "control"), ("destroy", "control"), ("destroy", "default")]),
    (False, None, [("destroy", "control"), ("destroy", "default")]),
    (True, RuntimeError("peer closed"), [("barrier", "control"), ("destroy", "control"), ("destroy", "default")]),
])
def test_leave_destroys_the_newest_group_first_and_drops_both_even_when_the_barrier_fails(
        monkeypatch, wait, barrier_error, want):
    fake = _FakeDist(barrier_error)
    monkeypatch.setattr(ranks, "_dist", lambda: fake)
    group = ParallelGroup(rank=0, size=2, compute="world", control="control")
    if barrier_error:
        with pytest.raises(RuntimeError, match="peer closed"):
            group.leave(wait)
    else:
        group.leave(wait)
    assert fake.calls == want
    # no reference to either group is left, so nothing keeps their threads alive until the interpreter exits
    assert group.compute is None and group.control is None and not group.joined
    group.leave()
    assert fake.calls == want  # a second leave does nothing


class _DeadPeerGroup:
    def __init__(self):
        self.left = None

    def send(self, message):
        raise RuntimeError("Connection closed by peer")

    def leave(self, wait=True):
        self.left = wait


def test_closing_rank_0_after_a_peer_died_still_leaves_its_groups():
    from engine.native.tensor_parallel import ParallelRunner
    runner = SimpleNamespace(closed=False, group=_DeadPeerGroup())
    ParallelRunner.close(runner)
    assert runner.closed and runner.group.left is False


TWO_RANKS = """
import json, os, sys, torch
from engine.native.ranks import join_parallel, launched, serve_calls

def gloo_threads():  # native threads are invisible to `threading`; Linux names them in /proc (None elsewhere)
    if not os.path.isdir("/proc/self/task"):
        return None
    names = (open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task"))
    return sorted(n for n in names if "gloo" in n)

class Runner:  # what each rank runs; the all-reduce shows that the ranks run every call together
    def __init__(self, group):
        self.group, self.log = group, []
    def step(self, x, scale):
        total = self.group.all_reduce(torch.tensor([float(x * scale + self.group.rank)]))
        self.log.append(("step", x, scale, total.item()))
        return total.item()

group = join_parallel(launched().world_size, torch.device("cpu"), timeout_s=60)
runner = Runner(group)
before = gloo_threads()
if launched().is_main:
    got = [group.call(runner, "step", x, 10) for x in (1, 2)]
    group.send(None)
    group.leave()
else:
    got = serve_calls(group, runner)
# `group` (and the runner holding it) are still referenced, as rank 0's engine holds its group until exit
json.dump({"rank": group.rank, "got": got, "log": runner.log, "gloo_threads": [before, gloo_threads()]},
          open(sys.argv[1] + str(group.rank), "w"))
"""


def test_call_runs_the_method_on_every_rank_with_rank_0_args(tmp_path):
    port = str(_free_port())
    procs = []
    for rank in (0, 1):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "RANK": str(rank), "LOCAL_RANK": str(rank),
               "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen([sys.executable, "-c", TWO_RANKS, str(tmp_path / "rank")], cwd=ROOT, env=env,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()[-3000:]
    zero, one = (json.loads((tmp_path / f"rank{r}").read_text()) for r in (0, 1))
    # each step: x * 10 on rank 0 + (x * 10 + 1) on rank 1, summed on both
    assert zero["got"] == [21.0, 41.0] and one["got"] == 0
    assert zero["log"] == one["log"] == [["step", 1, 10, 21.0], ["step", 2, 10, 41.0]]
    # after leave no gloo thread is left to finish a work during interpreter exit (which aborts the process)
    for rank in (zero, one):
        running, after_leave = rank["gloo_threads"]
        assert running is None or (running and after_leave == []), rank["gloo_threads"]
