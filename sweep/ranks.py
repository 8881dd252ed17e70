"""The sweeps' view of torchrun ranks, over engine.native.ranks. Data-parallel (`[parallel] dp`): each rank is
its own engine and runs its share, rank 0 writes. Tensor/expert-parallel (`tp`/`ep`): one engine spans every
process; rank 0 runs the sweep loop alone and the others only serve its model steps
(engine.native.rank_worker), so per-device rates divide by the world size.

Without torchrun (no WORLD_SIZE or WORLD_SIZE=1) everything is a single rank and no process group is created.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.native import ranks as rank_layer


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
        return rank_layer.rank_device_name(device, self.local_rank) if self.distributed else device

    def gather(self, obj: Any) -> list[Any]:
        """Every rank's object, in rank order (a single-element list without torchrun)."""
        return rank_layer.gather_objects(obj, self.world_size) if self.distributed else [obj]

    def barrier(self) -> None:
        if self.distributed:
            rank_layer.barrier()

    def close(self) -> None:
        if self.distributed:
            rank_layer.leave_world()

    def layout(self) -> dict[str, Any]:
        return {"dp": self.world_size, "tp": self.tp, "ep": self.ep, "world_size": self.devices,
                "backend": self.backend}


def init_ranks(device: str) -> Ranks:
    """Join the torchrun process group when launched under torchrun with more than one rank."""
    launch = rank_layer.launched()
    if launch.world_size <= 1:
        return Ranks()
    ranks = Ranks(rank=launch.rank, world_size=launch.world_size, local_rank=launch.local_rank,
                  backend=rank_layer.backend_for(device))
    if ranks.backend != "gloo":  # each rank on its own accelerator before the group forms
        rank_layer.set_accelerator(ranks.device_for(device.split(":")[0]))
    rank_layer.join_world(device)
    return ranks


def model_parallel_ranks(device: str, tp: int, ep: int, dp_attention: bool = False) -> Ranks:
    """tp/ep: the engine joins the process group itself (rank 0's LLMEngine, the others' rank_worker); the sweep
    loop runs on rank 0 alone, so this view has one data-parallel rank and gathers nothing."""
    launch = rank_layer.launched()
    rank_layer.check_parallel(tp, ep, dp_attention, world=launch.world_size)
    return Ranks(rank=launch.rank, local_rank=launch.local_rank, backend=rank_layer.backend_for(device), tp=tp, ep=ep)
