"""Continuous batching: a token budget per step, chunked prefill mixed with decodes, preemption by recompute."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from engine.native.block_manager import BlockManager
from engine.native.config import EngineConfig
from engine.native.sequence import Sequence, SeqStatus


@dataclass
class ScheduledBatch:
    """Sequences with how many of their tokens this step computes (decodes have 1)."""

    seqs: list[Sequence]
    num_new_tokens: list[int]
    num_preempted: int = 0

    @property
    def empty(self) -> bool:
        return not self.seqs


class Scheduler:
    def __init__(self, config: EngineConfig, block_manager: BlockManager):
        self.config = config
        self.bm = block_manager
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.total_preemptions = 0
        self.total_recomputed_tokens = 0  # generated tokens whose K/V a preemption dropped (computed again later)

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def _preempt(self, seq: Sequence) -> None:
        # vLLM-style recompute: drop the youngest sequence's KV blocks but keep its tokens; when readmitted it
        # prefills prompt + generated tokens again (its prompt blocks may still hit the prefix cache).
        self.running.remove(seq)
        self.total_recomputed_tokens += max(0, seq.num_computed_tokens - seq.num_prompt_tokens)
        self.bm.free_seq(seq)
        seq.status = SeqStatus.WAITING
        seq.num_preemptions += 1
        self.total_preemptions += 1
        self.waiting.appendleft(seq)

    def schedule(self) -> tuple[ScheduledBatch, list[Sequence]]:
        """Pick this step's work; also returns sequences that can never fit in the KV cache."""
        budget = self.config.max_num_batched_tokens  # read per step: sweeps change it between points
        chunk_cap = self.config.max_prefill_chunk or budget
        seqs, counts, failed, preempted = [], [], [], 0
        # Running sequences first (decodes and unfinished prefill chunks), oldest first.
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed_tokens, budget, chunk_cap)
            while not self.bm.can_grow(seq, seq.num_computed_tokens + n):
                victim = self.running[-1]
                if victim is seq and len(self.running) == 1:
                    break
                self._preempt(victim)
                preempted += 1
                if victim is seq:
                    break
            if seq.status != SeqStatus.RUNNING:
                continue  # preempted itself; i now points at the next sequence
            if not self.bm.can_grow(seq, seq.num_computed_tokens + n):
                # Alone and still no room: this request needs more KV than the whole cache holds.
                self.running.remove(seq)
                self.bm.free_seq(seq)
                seq.error = (f"request needs more KV cache than the budget holds "
                             f"({self.bm.num_blocks} blocks of {self.bm.block_size} tokens)")
                failed.append(seq)
                continue
            self.bm.grow(seq, seq.num_computed_tokens + n)
            seqs.append(seq)
            counts.append(n)
            budget -= n
            i += 1
        # Then admit waiting sequences while the budget, the batch size and the free blocks allow.
        while self.waiting and budget > 0 and len(self.running) < self.config.max_num_seqs and not preempted:
            seq = self.waiting[0]
            if seq.num_preemptions and self.running and not self._fits_to_the_end(seq):
                break  # it would only be preempted again; wait until running sequences finish
            hits = self.bm.lookup_prefix(seq)
            n = min(seq.num_tokens - len(hits) * self.bm.block_size, budget, chunk_cap)
            if not self.bm.admit(seq, n):
                if not self.running and not seqs:
                    self.waiting.popleft()
                    seq.error = (f"request needs more KV cache than the budget holds "
                                 f"({self.bm.num_blocks} blocks of {self.bm.block_size} tokens)")
                    failed.append(seq)
                    continue
                break
            self.waiting.popleft()
            seq.status = SeqStatus.RUNNING
            self.running.append(seq)
            seqs.append(seq)
            counts.append(n)
            budget -= n
        return ScheduledBatch(seqs, counts, preempted), failed

    def _final_blocks(self, seq: Sequence) -> int:
        limit = seq.num_prompt_tokens + seq.params.max_tokens
        return self.bm.blocks_for(min(limit, self.config.max_model_len or limit))

    def _fits_to_the_end(self, seq: Sequence) -> bool:
        """Whether a preempted sequence and every running one can grow to their token limits in the free blocks.
        Readmitting it sooner thrashes: the youngest is preempted again as soon as an older one needs a block,
        and each round recomputes its whole context (17x the ideal compute for 8 x 4k tokens in room for 4)."""
        outstanding = sum(max(0, self._final_blocks(s) - len(s.block_table)) for s in self.running)
        return self._final_blocks(seq) + outstanding <= self.bm.num_free

    def finish(self, seq: Sequence) -> None:
        if seq.status == SeqStatus.RUNNING:
            self.running.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        self.bm.free_seq(seq)
        seq.status = SeqStatus.FINISHED
