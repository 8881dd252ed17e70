"""Process groups for tensor and expert parallelism, launched by torchrun: gloo on CPU, NCCL on CUDA, HCCL on Ascend.

Two groups: `compute` carries the collectives inside a forward (all-reduce, logits gather) under the
configured timeout, so a dead peer ends a step with an error instead of a hang; `control` (gloo) carries
rank 0's step messages with a long timeout, because a server may sit idle for hours between requests.
A peer that exits closes its sockets, which ends a pending wait at once on the others.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

from engine.base import EngineError

BACKENDS = {"cpu": "gloo", "cuda": "nccl", "npu": "hccl"}
IDLE_TIMEOUT = timedelta(days=7)


@dataclass
class ParallelGroup:
    rank: int
    size: int
    compute: object  # a torch.distributed ProcessGroup
    control: object

    def all_reduce(self, x: torch.Tensor) -> torch.Tensor:
        dist.all_reduce(x, group=self.compute)
        return x

    def all_gather_cols(self, x: torch.Tensor) -> torch.Tensor:
        """[T, n] from each rank -> [T, size * n], rank order."""
        parts = [torch.empty_like(x) for _ in range(self.size)]
        dist.all_gather(parts, x.contiguous(), group=self.compute)
        return torch.cat(parts, dim=1)

    def all_gather_rows(self, x: torch.Tensor, rows: list[int]) -> torch.Tensor:
        """[rows[rank], n] from each rank -> [sum(rows), n], rank order (padded to the longest for the gather)."""
        pad = x.new_zeros(max(rows), *x.shape[1:])
        pad[:x.shape[0]] = x
        parts = [torch.empty_like(pad) for _ in range(self.size)]
        dist.all_gather(parts, pad, group=self.compute)
        return torch.cat([p[:n] for p, n in zip(parts, rows)])

    def send(self, message: object) -> None:
        """Rank 0: hand one message to every other rank."""
        dist.broadcast_object_list([message], src=0, group=self.control)

    def leave(self) -> None:
        """Every rank, once the last message is through: wait for all, then tear the groups down (a rank that
        tore down while a peer still read from it would abort the process)."""
        dist.barrier(group=self.control)
        dist.destroy_process_group()

    def receive(self) -> object:
        box = [None]
        dist.broadcast_object_list(box, src=0, group=self.control)
        return box[0]


def launched_ranks() -> tuple[int, int]:
    """(rank, world size) from torchrun's environment; (0, 1) outside torchrun."""
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def init_parallel(size: int, device: torch.device, timeout_s: float, flag: str = "tp") -> ParallelGroup:
    """Join (or reuse) the default process group; world size must equal `size` (the --tp or --ep value)."""
    rank, world = launched_ranks()
    if world != size:
        raise EngineError(f"--{flag} {size} needs {size} processes, but WORLD_SIZE is {world}; launch with "
                          f"`torchrun --nproc-per-node {size} -m harness ... --{flag} {size}`")
    if device.type not in BACKENDS:
        raise EngineError(f"parallel ranks have no backend for device {device.type!r}")
    if not dist.is_initialized():
        dist.init_process_group(BACKENDS[device.type], timeout=timedelta(seconds=timeout_s))
    compute = dist.group.WORLD
    control = dist.new_group(backend="gloo", timeout=IDLE_TIMEOUT)
    return ParallelGroup(rank=dist.get_rank(), size=dist.get_world_size(), compute=compute, control=control)


def rank_device(device: torch.device) -> torch.device:
    """Each rank of a node takes its own accelerator (LOCAL_RANK); CPU ranks share the CPU."""
    if device.type == "cpu":
        return device
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device(device.type, local)
    set_accelerator(dev)
    return dev


def set_accelerator(dev: torch.device | str) -> None:
    """Make `dev` (e.g. cuda:1, npu:1) this process's current device, so that NCCL/HCCL and unplaced tensors use it."""
    kind = str(dev).split(":")[0]
    if kind == "cuda":
        torch.cuda.set_device(dev)
    elif kind == "npu":
        if not hasattr(torch, "npu"):
            import torch_npu  # noqa: F401  (registers torch.npu and the "npu" device type)
        torch.npu.set_device(dev)
