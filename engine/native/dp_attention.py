"""DP attention for expert parallelism (`--ep N --dp-attention`): each rank runs attention for its own
requests only; the routed experts stay split over the ranks and see every rank's tokens.

Still one scheduler: rank 0 schedules every request, gives each new request to the rank that owns the
fewest live ones (it stays there, through preemption too), and sends one message per step holding every
rank's slice of the batch (ids, positions, attention metadata); each rank keeps its own. In every MoE
layer the ranks all-gather their hidden rows (padded to the longest slice), each runs its experts on all of
them, an all-reduce sums the experts' outputs and each rank keeps its own rows (deepseek_v3_moe). After the
forward the final hidden rows are gathered the same way, so rank 0 samples (and the MTP drafter, whole on
rank 0, drafts) for every request. Per MoE layer that is an all-gather and an all-reduce of all the step's
rows; attention work and KV cache traffic are divided by N.

KV: every rank addresses the same block pool (rank 0's block manager), and a request's rows live only on
its rank. On the CPU the cache is allocated untouched, so a rank's resident KV is about its own requests';
an accelerator commits the whole pool on every rank. Prefix caching is off in this mode: a hit would reuse
blocks whose rows live on another rank.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.base import EngineError
from engine.native.attention import AttentionMetadata
from engine.native.model_runner import ModelRunner
from engine.native.sequence import Sequence
from engine.native.tensor_parallel import TPModelRunner, _peer_failures


@dataclass
class DPStepMessage:
    parts: list[tuple[torch.Tensor, torch.Tensor, AttentionMetadata]]  # one (ids, positions, attn) per rank
    zero_blocks: list[int]


def empty_part() -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata]:
    """The inputs of a rank with no rows this step: it still joins every MoE layer's collectives."""
    none = torch.empty(0, dtype=torch.long)
    return none, none, AttentionMetadata(slot_mapping=none)


def run_part(runner: ModelRunner, parallel, parts: list) -> torch.Tensor:
    """This rank's forward over its slice of `parts`; then every rank's final hidden rows, in rank order
    (every rank joins that gather, and every MoE layer's collectives, even with no rows of its own)."""
    rows = [p[0].shape[0] for p in parts]
    runner.model.set_dp_rows(rows, parallel.rank)
    hidden = ModelRunner.forward(runner, *parts[parallel.rank])  # the plain forward: no step message
    return parallel.all_gather_rows(hidden, rows)


class DPAttentionRunner(TPModelRunner):
    """Rank 0's runner under DP attention: splits each step's batch by owning rank (see the module doc)."""

    def __init__(self, model, kv_cache, device, parallel):
        if not hasattr(model, "set_dp_rows"):
            raise EngineError(f"--dp-attention applies to DeepSeek-V3 models only, not {model.config.architecture!r}")
        super().__init__(model, kv_cache, device, parallel)
        self._owner: dict[str, tuple[int, Sequence]] = {}
        self.rows_per_rank = [0] * parallel.size  # tokens each rank ran through attention (load balance)
        self.idle_rank_steps = 0  # steps where some rank had no rows (it still joined the MoE collectives)

    def _rank_of(self, seq: Sequence) -> int:
        got = self._owner.get(seq.request_id)
        if got is not None and got[1] is seq:
            return got[0]
        load = [0] * self.parallel.size
        for rid, (r, s) in list(self._owner.items()):
            if s.is_finished:  # finished requests leave the table the first time a new request looks
                del self._owner[rid]
            else:
                load[r] += 1
        rank = min(range(len(load)), key=load.__getitem__)
        self._owner[seq.request_id] = (rank, seq)
        return rank

    def run(self, seqs: list[Sequence], chunks: list[list[int]]) -> tuple[torch.Tensor, list[int]]:
        owner = [self._rank_of(seq) for seq in seqs]
        groups = [[i for i, r in enumerate(owner) if r == k] for k in range(self.parallel.size)]
        parts, firsts = [], []
        for g in groups:
            if g:
                ids, positions, attn, first = self.prepare([seqs[i] for i in g], [chunks[i] for i in g])
                parts.append((ids, positions, attn))
                firsts.append(first)
            else:
                parts.append(empty_part())
                firsts.append([])
        for r, (ids, _, _) in enumerate(parts):
            self.rows_per_rank[r] += ids.shape[0]
        self.idle_rank_steps += not all(groups)
        # Rows in the gathered hidden states: rank 0's slice, then rank 1's, ...
        offset, first_row = 0, [0] * len(seqs)
        for g, first, (ids, _, _) in zip(groups, firsts, parts):
            for i, f in zip(g, first):
                first_row[i] = offset + f
            offset += ids.shape[0]
        with _peer_failures():
            self.parallel.send(DPStepMessage(parts, self.kv.take_zeroes_for_peers()))
            return run_part(self, self.parallel, parts), first_row
