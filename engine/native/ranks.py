"""The rank layer: torchrun's environment, the backend and device of each rank, the process groups and their
timeouts, the tp/ep rules, and the call loop by which rank 0 drives the others.

Backends: gloo on CPU, NCCL on CUDA, HCCL on Ascend. A model-parallel launch (--tp/--ep) has two groups:
`compute` carries the collectives inside a forward (all-reduce, logits gather) under the configured timeout,
so a dead peer ends a step with an error instead of a hang; `control` (gloo) carries rank 0's calls with a
long timeout, because a server may sit idle for hours between requests. A peer that exits closes its
sockets, which ends a pending wait at once on the others.

Rank 0 drives: `call(runner, method, *args)` sends (method, args) to every other rank, then runs the
method itself; `serve_calls` is the other ranks' loop, `getattr(runner, method)(*args)` until rank 0 says
stop (nano-vllm's pattern). torch is imported on first use, so the CLI's flag checks stay cheap.

Teardown (`ParallelGroup.leave`; every rank, on success and on failure, and at exit for a rank that never got
there): a barrier on the control group while the peers are alive, then destroy the control group, then the
default one, and drop this process's last references to them, so that their gloo threads are joined there and
then. destroy_process_group alone leaves a group's threads running while anything holds the group; one that
frees its last work (the final barrier holds the stop message's tensors) after the interpreter has begun to
finalize needs the GIL, Python ends it with pthread_exit, and the process aborts with "terminate called without
an active exception" (seen on loaded machines, where that thread lags behind the main one).
"""
from __future__ import annotations

import atexit
import os
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from engine.base import EngineError

if TYPE_CHECKING:
    import torch

BACKENDS = {"cpu": "gloo", "cuda": "nccl", "npu": "hccl"}
DIST_TIMEOUT_S = 300.0  # --dist-timeout's default: how long a collective waits for a peer
IDLE_TIMEOUT = timedelta(days=7)


def _dist():
    import torch.distributed as dist
    return dist


@dataclass(frozen=True)
class Launch:
    """This process's place in a torchrun launch; rank 0 of 1 outside torchrun."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def launched() -> Launch:
    """torchrun's RANK, WORLD_SIZE and LOCAL_RANK (the only place that reads them)."""
    env = os.environ
    return Launch(int(env.get("RANK", "0")), int(env.get("WORLD_SIZE", "1")), int(env.get("LOCAL_RANK", "0")))


class ParallelError(EngineError, ValueError):
    """A tp/ep/dp-attention combination or launch size that cannot run (an EngineError and a ValueError, so
    the engine and the command line report it the same way)."""


def check_parallel(tp: int = 1, ep: int = 1, dp_attention: bool = False, world: int | None = None) -> tuple[int, str]:
    """The tp/ep rules, in one place: returns (ranks one engine spans, "tp" or "ep"). With `world` (the
    launch's WORLD_SIZE) a model-parallel size must equal it."""
    for flag, n in (("--tp", tp), ("--ep", ep)):
        if n < 1:
            raise ParallelError(f"{flag} must be >= 1, got {n}")
    if tp > 1 and ep > 1:
        raise ParallelError(f"--tp {tp} and --ep {ep} together are not supported; use one of them "
                            "(--tp: Llama family, --ep: DeepSeek-V3 experts)")
    if dp_attention and ep < 2:
        raise ParallelError("--dp-attention splits requests over expert-parallel ranks; it needs --ep 2 or more")
    size, mode = (ep, "ep") if ep > 1 else (tp, "tp")
    if world is not None and size > 1 and world != size:
        raise ParallelError(f"--{mode} {size} (a sweep's [parallel] {mode} = {size}) needs {size} processes, but "
                            f"WORLD_SIZE is {world}; launch with `torchrun --nproc-per-node {size} -m harness ... "
                            f"--{mode} {size}` (a sweep: `bash sweep/run_sweep.sh`)")
    return size, mode


def backend_for(device: str) -> str:
    """The process-group backend of a device kind ("cuda:1" -> nccl)."""
    kind = str(device).split(":")[0]
    if kind not in BACKENDS:
        raise EngineError(f"parallel ranks have no backend for device {kind!r}; known: {', '.join(BACKENDS)}")
    return BACKENDS[kind]


def rank_device_name(device: str, local_rank: int) -> str:
    """Each rank of a node takes its own accelerator (cuda:LOCAL_RANK); CPU ranks share the host."""
    kind = str(device).split(":")[0]
    return f"{kind}:{local_rank}" if kind in ("cuda", "npu") else str(device)


def device_for(device: torch.device) -> torch.device:
    """This rank's device under torchrun, made the current one (see rank_device_name)."""
    import torch
    if device.type == "cpu":
        return device
    dev = torch.device(rank_device_name(device.type, launched().local_rank))
    set_accelerator(dev)
    return dev


def set_accelerator(dev: torch.device | str) -> None:
    """Make `dev` (e.g. cuda:1, npu:1) this process's current device, so that NCCL/HCCL and unplaced tensors use it."""
    import torch
    kind = str(dev).split(":")[0]
    if kind == "cuda":
        torch.cuda.set_device(dev)
    elif kind == "npu":
        if not hasattr(torch, "npu"):
            import torch_npu  # noqa: F401  (registers torch.npu and the "npu" device type)
        torch.npu.set_device(dev)


def join_world(device: str, timeout_s: float | None = None) -> None:
    """Join torchrun's default process group (once per process) with the device's backend; the rank's
    accelerator must be current first (device_for / set_accelerator)."""
    dist = _dist()
    if not dist.is_initialized():
        limit = {} if timeout_s is None else {"timeout": timedelta(seconds=timeout_s)}  # else torch's default
        dist.init_process_group(backend_for(device), **limit)


def leave_world() -> None:
    """Tear the default process group down (every rank, once its last collective is through); the caller drops its
    own references to the groups first (ParallelGroup.leave), so that their threads are joined here."""
    dist = _dist()
    if dist.is_initialized():
        dist.destroy_process_group()


def gather_objects(obj: Any, world_size: int) -> list[Any]:
    """Every rank's object, in rank order, over the default group."""
    out: list[Any] = [None] * world_size
    _dist().all_gather_object(out, obj)
    return out


def barrier() -> None:
    _dist().barrier()


@dataclass
class ParallelGroup:
    """The ranks one model-parallel engine spans (see the module doc for its two groups)."""

    rank: int
    size: int
    compute: object  # a torch.distributed ProcessGroup
    control: object

    def all_reduce(self, x: torch.Tensor) -> torch.Tensor:
        _dist().all_reduce(x, group=self.compute)
        return x

    def all_gather_cols(self, x: torch.Tensor) -> torch.Tensor:
        """[T, n] from each rank -> [T, size * n], rank order."""
        import torch
        parts = [torch.empty_like(x) for _ in range(self.size)]
        _dist().all_gather(parts, x.contiguous(), group=self.compute)
        return torch.cat(parts, dim=1)

    def all_gather_rows(self, x: torch.Tensor, rows: list[int]) -> torch.Tensor:
        """[rows[rank], n] from each rank -> [sum(rows), n], rank order (padded to the longest for the gather)."""
        import torch
        pad = x.new_zeros(max(rows), *x.shape[1:])
        pad[:x.shape[0]] = x
        parts = [torch.empty_like(pad) for _ in range(self.size)]
        _dist().all_gather(parts, pad, group=self.compute)
        return torch.cat([p[:n] for p, n in zip(parts, rows)])

    def barrier(self) -> None:
        """Wait for every rank on the control group (no compute timeout: a rank may be converting weights)."""
        _dist().barrier(group=self.control)

    def send(self, message: object) -> None:
        """Rank 0: hand one message to every other rank."""
        _dist().broadcast_object_list([message], src=0, group=self.control)

    def receive(self) -> object:
        """A rank other than 0: the next message rank 0 sends."""
        box = [None]
        try:
            _dist().broadcast_object_list(box, src=0, group=self.control)
        except Exception as exc:  # rank 0 exited or was killed: its sockets closed
            raise EngineError(f"tensor parallel rank {self.rank}: lost rank 0 ({type(exc).__name__}: {exc}); "
                              f"stopping") from exc
        return box[0]

    def call(self, target: object, method: str, *args) -> Any:
        """Rank 0: every rank runs target.method(*args), the others in serve_calls, this one last."""
        try:
            self.send((method, args))
            return getattr(target, method)(*args)
        except RuntimeError as exc:  # gloo/NCCL: a peer died, or a collective passed --dist-timeout
            raise step_failure(self.rank, exc) from exc

    @property
    def joined(self) -> bool:
        """Whether this rank still holds its groups (until leave)."""
        return self.control is not None

    def leave(self, wait: bool = True) -> None:
        """Every rank, once the last message is through: wait for all (`wait`; False when a peer is gone), then
        destroy the groups, newest first, and drop them, so that their threads end now (see the module doc).
        Idempotent; the groups are gone even when the barrier fails."""
        if not self.joined:
            return
        try:
            if wait:
                self.barrier()
        finally:
            control, self.control, self.compute = self.control, None, None
            if _dist().is_initialized():  # else every group is gone already
                _dist().destroy_process_group(control)
            del control  # the last reference: the control group's threads are joined here
            leave_world()


def join_parallel(size: int, device: torch.device, timeout_s: float, mode: str = "tp") -> ParallelGroup:
    """Join (or reuse) the default process group for a model-parallel engine of `size` ranks (--tp/--ep N)."""
    dist = _dist()
    check_parallel(**{mode: size}, world=launched().world_size)
    backend_for(device.type)  # a clear error before any group forms
    join_world(device.type, timeout_s)
    control = dist.new_group(backend="gloo", timeout=IDLE_TIMEOUT)
    group = ParallelGroup(rank=dist.get_rank(), size=dist.get_world_size(), compute=dist.group.WORLD, control=control)
    # A rank that never reaches leave (an error, an engine never closed) leaves before the interpreter finalizes.
    atexit.register(group.leave, wait=False)
    return group


def step_failure(rank: int, exc: BaseException) -> EngineError:
    """What a rank reports when a step fails on it: the usual cause is another rank's death."""
    return EngineError(f"tensor parallel rank {rank}: a step failed ({type(exc).__name__}: {exc}); "
                       f"another rank may have died")


def serve_calls(group: ParallelGroup, runner: object) -> int:
    """A rank other than 0: run each call rank 0 makes on this rank's runner until it sends None, then leave."""
    try:
        while (call := group.receive()) is not None:
            method, args = call
            try:
                getattr(runner, method)(*args)
            except Exception as exc:  # whatever ends a worker's step ends the worker, naming its rank
                raise step_failure(group.rank, exc) from exc
    except BaseException:
        group.leave(wait=False)  # a peer is gone or this rank failed: no barrier, but no group left for exit
        raise
    group.leave()
    return 0
