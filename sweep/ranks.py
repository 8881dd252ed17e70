"""Data-parallel ranks under torchrun: each rank runs its share, rank 0 writes.

Without torchrun (no WORLD_SIZE or WORLD_SIZE=1) everything is a single rank and no process group
is created. Backends: gloo on CPU, nccl on CUDA, hccl on NPU.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class Ranks:
    """This process's place in the data-parallel group."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str | None = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def device_for(self, device: str) -> str:
        """Each rank gets its own accelerator (cuda:LOCAL_RANK); CPU ranks share the host."""
        if self.distributed and device in ("cuda", "npu"):
            return f"{device}:{self.local_rank}"
        return device

    def gather(self, obj: Any) -> list[Any]:
        """Every rank's object, in rank order (a single-element list without torchrun)."""
        if not self.distributed:
            return [obj]
        out: list[Any] = [None] * self.world_size
        torch.distributed.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        if self.distributed:
            torch.distributed.barrier()

    def close(self) -> None:
        if self.distributed and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()

    def layout(self, tp: int = 1) -> dict[str, Any]:
        return {"dp": self.world_size, "tp": tp, "world_size": self.world_size * tp, "backend": self.backend}


def init_ranks(device: str) -> Ranks:
    """Join the torchrun process group when launched under torchrun with more than one rank."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Ranks()
    backend = {"cuda": "nccl", "npu": "hccl"}.get(device.split(":")[0], "gloo")
    ranks = Ranks(rank=int(os.environ["RANK"]), world_size=world,
                  local_rank=int(os.environ.get("LOCAL_RANK", "0")), backend=backend)
    if backend == "nccl":
        torch.cuda.set_device(ranks.local_rank)
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend=backend)
    return ranks
