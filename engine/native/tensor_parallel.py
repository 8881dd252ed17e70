"""Tensor and expert parallelism: rank 0 runs the whole engine (scheduler, sampler, outputs) and has every rank
run each step on its shard of the model through `call` (engine.native.ranks); the forward's collectives
(all-reduces, logits gather) keep the ranks in step. Ranks other than 0 hold no scheduler state.
What each rank loads is engine.native.shard's job; the worker's process is engine.native.rank_worker.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.native.attention import AttentionMetadata
from engine.native.device import dtype_name
from engine.native.kv_cache import KVCache
from engine.native.model_registry import REGISTRY, ResolvedModel
from engine.native.model_runner import ModelRunner
from engine.native.ranks import ParallelGroup


@dataclass
class Hello:
    """Rank 0's first message: what every rank needs to build the same shard layout, KV cache and runner."""

    model: str
    dtype: str
    kv_cache_bytes: int
    block_size: int
    mode: str = "tp"  # "tp" or "ep": the flag the user launched with (checked against the model class)
    dp_attention: bool = False

    @classmethod
    def of(cls, resolved: ResolvedModel, dtype: torch.dtype, kv_cache_bytes: int, block_size: int,
           mode: str = "tp", dp_attention: bool = False) -> "Hello":
        # A registry name travels as itself (each node finds its own install); a path as an absolute path.
        model = resolved.name if resolved.name in REGISTRY else str(resolved.path)
        return cls(model, dtype_name(dtype), kv_cache_bytes, block_size, mode, dp_attention)


class ParallelRunner(ModelRunner):
    """Every rank's runner under --tp/--ep. The engine (rank 0) calls forward/logits as on one rank; those go
    through call(), so each other rank runs the same method (ranks.serve_calls) on the same inputs."""

    def __init__(self, model, kv_cache: KVCache, device: torch.device, group: ParallelGroup):
        super().__init__(model, kv_cache, device)
        self.group = group
        self.hidden: torch.Tensor | None = None  # the last step's hidden rows, which logits read on every rank
        self.closed = False
        if group.rank == 0:
            kv_cache.track_zeroes_for_peers()  # the MTP drafter zeroes blocks between forwards

    def call(self, method: str, *args):
        """Rank 0: every rank runs self.method(*args), this one last (nano-vllm's call)."""
        return self.group.call(self, method, *args)

    # ---- rank 0: the engine's interface -------------------------------------------------------------
    def forward(self, input_ids, positions, attn):
        return self.call("forward_shard", input_ids, positions, attn, self.kv.take_zeroes_for_peers())

    def logits(self, hidden, rows):
        if not self.model.LOGITS_NEED_PEERS:  # a replicated head (expert parallelism): no call, no gather
            return super().logits(hidden, rows)
        self.hidden = hidden
        return self.call("logits_shard", rows)

    def close(self) -> None:
        """Tell the other ranks to leave their loop, then leave with them (idempotent)."""
        if not self.closed:
            self.closed = True
            try:
                self.group.send(None)
                self.group.leave()
            except RuntimeError:  # a peer is already gone: the step that found out has reported it
                self.group.leave(wait=False)

    # ---- every rank ---------------------------------------------------------------------------------
    def forward_shard(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionMetadata,
             zero_blocks: list[int]) -> torch.Tensor:
        """This rank's shard over one step's inputs; first zero the KV blocks rank 0 handed out since the last."""
        if self.group.rank != 0:  # rank 0 zeroed them when it took the list
            self.kv.zero_blocks(zero_blocks)
        self.hidden = super().forward(input_ids, positions, attn)
        return self.hidden

    def logits_shard(self, rows: list[int]) -> torch.Tensor:
        """Logits of the last step's rows (every rank joins the vocab-parallel gather)."""
        return super().logits(self.hidden, rows)
