"""Ranks under torchrun. Data-parallel (`[parallel] dp`): each rank is its own engine and runs its share,
rank 0 writes. Tensor/expert-parallel (`tp`/`ep`): one engine spans every process; rank 0 runs the sweep
loop alone and the others only serve its model steps (engine.native.tensor_parallel), so per-device rates
divide by the world size.

Without torchrun (no WORLD_SIZE or WORLD_SIZE=1) everything is a single rank and no process group
is created. Backends: gloo on CPU, nccl on CUDA, hccl on NPU.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch

BACKENDS = {"cuda": "nccl", "npu": "hccl"}  # anything else: gloo


@dataclass
class Ranks:
    """This process's place in the data-parallel group."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str | None = None
    tp: int = 1
    ep: int = 1  # tp/ep > 1: one engine over tp * ep processes; this Ranks is rank 0's (or a worker's) view

    @property
    def devices(self) -> int:
        """The per-device denominator: every process of the launch holds one device."""
        return self.world_size * self.tp * self.ep

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

    def layout(self) -> dict[str, Any]:
        return {"dp": self.world_size, "tp": self.tp, "ep": self.ep, "world_size": self.devices,
                "backend": self.backend}


def init_ranks(device: str) -> Ranks:
    """Join the torchrun process group when launched under torchrun with more than one rank."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Ranks()
    backend = BACKENDS.get(device.split(":")[0], "gloo")
    ranks = Ranks(rank=int(os.environ["RANK"]), world_size=world,
                  local_rank=int(os.environ.get("LOCAL_RANK", "0")), backend=backend)
    if backend in ("nccl", "hccl"):  # each rank on its own accelerator before the group forms
        from engine.native.parallel import set_accelerator
        set_accelerator(ranks.device_for(device.split(":")[0]))
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend=backend)
    return ranks


def model_parallel_ranks(device: str, tp: int, ep: int) -> Ranks:
    """tp/ep: the engine joins the process group itself (rank 0's LLMEngine, the others' run_worker); the sweep
    loop runs on rank 0 alone, so this view has one data-parallel rank and gathers nothing."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world != tp * ep:
        flag, n = ("tp", tp) if tp > 1 else ("ep", ep)
        raise ValueError(f"[parallel] {flag} = {n} needs {n} processes, but WORLD_SIZE is {world}; launch with "
                         f"`bash sweep/run_sweep.sh` (or torchrun --nproc-per-node {n})")
    return Ranks(rank=int(os.environ.get("RANK", "0")), local_rank=int(os.environ.get("LOCAL_RANK", "0")),
                 backend=BACKENDS.get(device.split(":")[0], "gloo"), tp=tp, ep=ep)
