"""LLMEngine with MTP speculative decoding (DeepSeek-V3-style checkpoints), plugged into its step pipeline.

The scheduler admits, chunks and preempts exactly as in LLMEngine. In `_build_inputs`, requests that are
decoding and whose MTP state is in step with their cache draft up to nextn tokens with the MTP module(s)
(spec_mtp.MTPDrafter); their chunk becomes the verify chunk [t_N, d_1..d_k], run in the same main-model
forward as this step's other chunks. In `_commit`, acceptance is greedy, rejection sampling (temperature > 0)
or the seeded synthetic mode, and the request's computed length rolls back to its last accepted position
(stale rows past it are overwritten later). Verify rows ride on top of the scheduler's token budget (it
counts one token per decoding request), and the blocks they need are taken at draft time; a request short
of blocks drafts fewer tokens instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.base import EngineError, SamplingParams
from engine.native.llm_engine import LLMEngine, LogitsProcessor, RequestOutput, StepOutput
from engine.native.sampler import filtered_probs
from engine.native.scheduler import ScheduledBatch
from engine.native.sequence import Sequence, is_greedy
from engine.native.spec_decode import (SpecStats, SyntheticAcceptance, accept_greedy, accept_rejection,
                                       accept_synthetic)
from engine.native.spec_mtp import DraftRequest, MTPDrafter


@dataclass
class _MTPState:
    """Main-model hidden states the MTP module has not consumed: positions [start, end)."""

    start: int
    pending: torch.Tensor

    @property
    def end(self) -> int:
        return self.start + self.pending.shape[0]


@dataclass
class _Draft:
    tokens: list[int]
    probs: torch.Tensor | None  # [k, V] distributions sampled drafts were drawn from (None when argmax)


class SpecLLMEngine(LLMEngine):
    """`LLMEngine(...)` plus nextn (draft tokens per step), synthetic_acceptance (benchmark mode) and spec_seed."""

    def __init__(self, *args, nextn: int = 0, synthetic_acceptance: float | None = None, spec_seed: int = 0,
                 **kwargs):
        super().__init__(*args, **kwargs)
        if nextn < 0:
            raise ValueError(f"nextn must be >= 0, got {nextn}")
        if nextn and getattr(self.model, "num_mtp", 0) == 0:
            raise EngineError(f"nextn={nextn}: model {self.model_name!r} ({self.model_config.architecture}) has no "
                              "MTP draft modules in its checkpoint, so it cannot run speculative decoding")
        self.nextn = nextn
        self.synthetic = SyntheticAcceptance(synthetic_acceptance, spec_seed) if synthetic_acceptance is not None else None
        self.spec_stats = SpecStats()  # whole engine
        # Per unfinished request; a finished request's stats leave with its final RequestOutput.spec_stats.
        self.request_spec_stats: dict[str, SpecStats] = {}
        self.last_step_spec = SpecStats()  # this step only (sweeps time whole steps)
        self._mtp: dict[str, _MTPState] = {}
        self._round: list[_Draft | None] = []  # this step's drafts, by position in the batch
        self.drafter = MTPDrafter(self.model, self.config.block_size, self.device) if nextn else None

    def add_request(self, prompt_token_ids: list[int], params: SamplingParams | None = None,
                    request_id: str | None = None, logits_processor: LogitsProcessor | None = None) -> str:
        if logits_processor is not None and self.nextn:
            raise EngineError("logits processors are not applied to speculative steps (drafts are verified "
                              "against the raw logits); use nextn=0 for constrained requests")
        return super().add_request(prompt_token_ids, params, request_id, logits_processor)

    def describe(self) -> dict:
        return {**super().describe(), "nextn": self.nextn,
                "synthetic_acceptance": self.synthetic.p if self.synthetic else None}

    def stats(self) -> dict:
        return {**super().stats(), "spec": self.spec_stats.to_dict()}

    # ---- hooks into LLMEngine.step ---------------------------------------------------------------------
    def _build_inputs(self, batch: ScheduledBatch) -> list[list[int]]:
        """Plain chunks, except that ready decoding requests feed [t_N, d_1..d_k] after drafting."""
        self.last_step_spec = SpecStats()
        chunks = super()._build_inputs(batch)
        self._round = [None] * len(chunks)
        ready = [i for i, seq in enumerate(batch.seqs) if self._can_draft(seq)] if self.nextn else []
        for i, draft in zip(ready, self._draft([batch.seqs[i] for i in ready])):
            self._round[i] = draft
            chunks[i] = chunks[i] + draft.tokens
        return chunks

    def _commit(self, seqs: list[Sequence], chunks: list[list[int]], hidden: torch.Tensor, first_row: list[int],
                out: StepOutput) -> list[int]:
        if not self.nextn:
            return super()._commit(seqs, chunks, hidden, first_row, out)
        emitted = [0] * len(seqs)
        plain = [i for i, d in enumerate(self._round) if d is None]
        for i in plain:  # the MTP module drafts from these hidden states later
            self._keep_hidden(seqs[i], hidden[first_row[i]:first_row[i] + len(chunks[i])])
        for i, e in zip(plain, super()._commit([seqs[i] for i in plain], [chunks[i] for i in plain], hidden,
                                               [first_row[i] for i in plain], out)):
            emitted[i] = e
        for i, draft in enumerate(self._round):
            if draft is not None:
                h = hidden[first_row[i]:first_row[i] + len(chunks[i])]
                try:
                    emitted[i] = self._verify(seqs[i], draft, h, out)
                except Exception as exc:  # e.g. sampling one row: fail that request, not the step
                    out.outputs.append(self._fail(seqs[i], f"speculative verify failed: {type(exc).__name__}: {exc}"))
        self._round = []
        return emitted

    def _finish_output(self, seq: Sequence, new_text: str, new_ids: list[int] | None = None) -> RequestOutput:
        # Every way a request ends (finished, aborted, failed) passes here: drop its per-request state.
        self._mtp.pop(seq.request_id, None)
        o = super()._finish_output(seq, new_text, new_ids)
        o.spec_stats = self.request_spec_stats.pop(seq.request_id, None)
        return o

    # ---- pieces -------------------------------------------------------------------------------------------
    def _can_draft(self, seq: Sequence) -> bool:
        """A decoding request drafts when its MTP state ends exactly where its cache ends: every position
        before its newest token was fed to the module or is pending. Preemption and prefix hits break this;
        the state then restarts at the next computed chunk (_keep_hidden)."""
        s = self._mtp.get(seq.request_id)
        return seq.is_decoding and s is not None and s.pending.shape[0] > 0 and s.end == seq.num_computed_tokens

    def _draft(self, seqs: list[Sequence]) -> list[_Draft]:
        if not seqs:
            return []
        reqs = []
        for seq in seqs:
            N = seq.num_computed_tokens
            room = min(seq.params.max_tokens - seq.num_output_tokens, self.config.max_model_len - seq.num_tokens)
            k = max(0, min(self.nextn, room - 1))
            while k and not self.block_manager.can_grow(seq, N + 1 + k):
                k -= 1  # short of KV blocks: draft fewer rather than preempt anyone
            self.block_manager.grow(seq, N + 1 + k)
            s = self._mtp[seq.request_id]
            greedy = is_greedy(seq.params) or self.synthetic is not None
            reqs.append(DraftRequest(seq.block_table, seq.token_ids, s.start, s.pending, k, seq.params,
                                     seq.generator, greedy))
        self.kv.flush_zeroes()  # the drafter writes MTP rows into the blocks just grown
        drafts, qprobs = self.drafter.propose(reqs)
        for seq, r in zip(seqs, reqs):
            if r.k:  # the module consumed every pending hidden state
                self._mtp[seq.request_id] = _MTPState(seq.num_computed_tokens, r.pending_hidden[:0])
        return [_Draft(d, q) for d, q in zip(drafts, qprobs)]

    def _keep_hidden(self, seq: Sequence, h: torch.Tensor) -> None:
        """Queue the main hidden states of positions [num_computed_tokens, + len(h)) for the MTP module."""
        start = seq.num_computed_tokens
        s = self._mtp.get(seq.request_id)
        if s is None or s.end != start:
            # New, re-admitted after preemption, or resumed past a prefix hit: MTP restarts here.
            self._mtp[seq.request_id] = _MTPState(start, h)
        else:
            s.pending = torch.cat([s.pending, h])

    def _verify(self, seq: Sequence, draft: _Draft, h: torch.Tensor, out: StepOutput) -> int:
        """Accept drafts, roll the computed length back to the last accepted one, emit; returns tokens emitted."""
        N, sp, drafts = seq.num_computed_tokens, seq.params, draft.tokens
        lg = self._logits(h, list(range(h.shape[0])))
        if self.synthetic is not None:
            n_acc, toks = accept_synthetic(drafts, lg, self.synthetic, sp, seq.generator)
        elif is_greedy(sp):
            n_acc, toks = accept_greedy(drafts, lg)
        else:
            n_acc, toks = accept_rejection(drafts, draft.probs if draft.probs is not None else lg[:0],
                                           filtered_probs(lg, [sp] * lg.shape[0]), seq.generator)
        if drafts:
            for stats in (self.spec_stats, self.last_step_spec,
                          self.request_spec_stats.setdefault(seq.request_id, SpecStats())):
                stats.record(len(drafts), n_acc)
        self._keep_hidden(seq, h[: n_acc + 1])
        seq.advance(len(drafts) + 1)
        seq.rollback(N + n_acc + 1)  # rows of rejected drafts are stale from here
        self.block_manager.register_computed(seq)
        logprobs = torch.log_softmax(lg, -1) if sp.logprobs else None
        for i, tok in enumerate(toks):
            if not self._emit(seq, tok, float(logprobs[i, tok]) if logprobs is not None else None, out):
                return i + 1  # finished inside the round: later tokens are dropped
        return len(toks)
