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

import torch

from engine.base import EngineError
from engine.native.attention import AttentionMetadata
from engine.native.sequence import Sequence
from engine.native.tensor_parallel import ParallelRunner

Part = tuple[torch.Tensor, torch.Tensor, AttentionMetadata]  # one rank's (ids, positions, attn) of a step


def empty_part() -> Part:
    """The inputs of a rank with no rows this step: it still joins every MoE layer's collectives."""
    none = torch.empty(0, dtype=torch.long)
    return none, none, AttentionMetadata(slot_mapping=none)


class DPAttentionRunner(ParallelRunner):
    """Every rank's runner under DP attention: rank 0 splits each step's batch by owning rank (see the module
    doc) and calls forward_parts; logits and close are the parallel runner's."""

    def __init__(self, model, kv_cache, device, group):
        if not hasattr(model, "set_dp_rows"):
            raise EngineError(f"--dp-attention applies to DeepSeek-V3 models only, not {model.config.architecture!r}")
        super().__init__(model, kv_cache, device, group)
        self._owner: dict[str, tuple[int, Sequence]] = {}
        self.rows_per_rank = [0] * group.size  # tokens each rank ran through attention (load balance)
        self.idle_rank_steps = 0  # steps where some rank had no rows (it still joined the MoE collectives)

    def _rank_of(self, seq: Sequence) -> int:
        got = self._owner.get(seq.request_id)
        if got is not None and got[1] is seq:
            return got[0]
        load = [0] * self.group.size
        for rid, (r, s) in list(self._owner.items()):
            if s.is_finished:  # finished requests leave the table the first time a new request looks
                del self._owner[rid]
            else:
                load[r] += 1
        rank = min(range(len(load)), key=load.__getitem__)
        self._owner[seq.request_id] = (rank, seq)
        return rank

    def run(self, seqs: list[Sequence], chunks: list[list[int]]) -> tuple[torch.Tensor, list[int]]:
        """Rank 0: each rank's slice of the batch, run on every rank; the hidden rows of all, in rank order."""
        owner = [self._rank_of(seq) for seq in seqs]
        groups = [[i for i, r in enumerate(owner) if r == k] for k in range(self.group.size)]
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
        return self.call("forward_parts", parts, self.kv.take_zeroes_for_peers()), first_row

    def forward_parts(self, parts: list[Part], zero_blocks: list[int]) -> torch.Tensor:
        """Every rank: its own slice through the model, then every rank's final hidden rows, in rank order
        (every rank joins that gather, and every MoE layer's collectives, even with no rows of its own)."""
        rows = [p[0].shape[0] for p in parts]
        self.model.set_dp_rows(rows, self.group.rank)
        hidden = self.forward_shard(*parts[self.group.rank], zero_blocks)
        self.hidden = self.group.all_gather_rows(hidden, rows)
        return self.hidden
