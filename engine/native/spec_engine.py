"""LLMEngine with MTP speculative decoding (DeepSeek-V3-style checkpoints).

The scheduler admits, chunks and preempts exactly as in LLMEngine. Each step, requests that are decoding
draft up to nextn tokens with the MTP module(s) (spec_mtp.MTPDrafter); their verify chunks [t_N, d_1..d_k]
then run in the same main-model forward as this step's prefill chunks. Acceptance is greedy, rejection
sampling (temperature > 0) or the seeded synthetic mode; the computed length of a request drops back to
its last accepted position, which is the rollback (stale rows past it are overwritten later).
Verify rows ride on top of the scheduler's token budget (it counts one token per decoding request), and
the blocks they need are taken at draft time; a request short of blocks drafts fewer tokens instead.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from engine.base import EngineError, SamplingParams
from engine.native.llm_engine import LLMEngine, LogitsProcessor, StepOutput
from engine.native.sampler import sample as engine_sample
from engine.native.sequence import Sequence
from engine.native.spec_decode import (SpecStats, SyntheticAcceptance, accept_greedy, accept_rejection,
                                       accept_synthetic, processed_probs)
from engine.native.spec_mtp import DraftRequest, MTPDrafter, chunk_meta


@dataclass
class _MTPState:
    mtp_pos: int  # first position whose main hidden state the MTP module has not consumed
    pending: torch.Tensor  # main hidden states of positions [mtp_pos, mtp_pos + len)


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
        self.request_spec_stats: dict[str, SpecStats] = {}  # per request id, kept after the request finishes
        self.last_step_spec = SpecStats()  # this step only (sweeps time whole steps)
        self._mtp: dict[str, _MTPState] = {}
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

    def step(self) -> StepOutput:
        if not self.nextn:
            return super().step()
        t0 = time.perf_counter()
        self.last_step_spec = SpecStats()
        out, batch = self._schedule()
        st = out.stats
        if batch.empty:
            st.elapsed_s = time.perf_counter() - t0
            return out
        st.num_seqs = len(batch.seqs)
        spec, plain = [], []
        for seq, n in zip(batch.seqs, batch.num_new_tokens):
            if seq.num_cached_tokens and seq.num_computed_tokens == seq.num_cached_tokens:  # admitted now
                st.num_cached_tokens += seq.num_cached_tokens
            (spec if self._ready(seq, n) else plain).append((seq, n))
        n_plain_decodes = sum(1 for seq, n in plain if self._is_decode(seq, n))
        st.num_prefill_tokens = sum(n for seq, n in plain) - n_plain_decodes
        drafts, qprobs = self._draft([s for s, _ in spec])
        self.kv.flush_zeroes()  # blocks handed out this step, before anything writes them
        with torch.inference_mode():
            items = [(seq, seq.num_computed_tokens, seq.token_ids[seq.num_computed_tokens:seq.num_computed_tokens + n])
                     for seq, n in plain]
            items += [(seq, seq.num_computed_tokens, [seq.token_ids[-1]] + d) for (seq, _), d in zip(spec, drafts)]
            meta = chunk_meta([(seq.block_table, s, s + len(ids)) for seq, s, ids in items], self.config.block_size,
                              self.device)
            ids = torch.tensor([t for _, _, x in items for t in x], dtype=torch.long, device=self.device)
            pos = torch.cat([torch.arange(s, s + len(x)) for _, s, x in items]).to(self.device)
            hidden = self.model(ids, pos, meta)
        row = self._finish_plain(plain, hidden, out)
        emitted = 0
        for (seq, _), d, q in zip(spec, drafts, qprobs):
            n = len(d) + 1
            emitted += self._finish_spec(seq, d, q, hidden[row:row + n], out)
            row += n
        # Decode tokens = tokens emitted by decoding requests (a verify round emits accepted drafts + 1).
        st.num_decode_tokens = n_plain_decodes + emitted
        for rid in [r for r in self._mtp if r not in self._seqs]:  # aborted or failed requests
            del self._mtp[rid]
        st.elapsed_s = time.perf_counter() - t0
        return out

    # ---- pieces -------------------------------------------------------------------------------------------
    @staticmethod
    def _is_decode(seq: Sequence, n: int) -> bool:
        return n == 1 and seq.num_output_tokens > 0 and seq.num_computed_tokens == seq.num_tokens - 1

    def _ready(self, seq: Sequence, n: int) -> bool:
        s = self._mtp.get(seq.request_id)
        return (self._is_decode(seq, n) and s is not None and s.pending.shape[0] > 0
                and s.mtp_pos + s.pending.shape[0] == seq.num_computed_tokens)

    def _draft(self, seqs: list[Sequence]) -> tuple[list[list[int]], list[torch.Tensor | None]]:
        if not seqs:
            return [], []
        reqs = []
        for seq in seqs:
            N = seq.num_computed_tokens
            room = min(seq.params.max_tokens - seq.num_output_tokens, self.config.max_model_len - seq.num_tokens)
            k = max(0, min(self.nextn, room - 1))
            while k and not self.block_manager.can_grow(seq, N + 1 + k):
                k -= 1  # short of KV blocks: draft fewer rather than preempt anyone
            self.block_manager.grow(seq, N + 1 + k)
            s = self._mtp[seq.request_id]
            greedy = seq.params.temperature == 0 or self.synthetic is not None
            reqs.append(DraftRequest(seq.block_table, seq.token_ids, s.mtp_pos, s.pending, k, seq.params,
                                     seq.generator, greedy))
        self.kv.flush_zeroes()  # the drafter writes MTP rows into the blocks just grown
        drafts, qprobs = self.drafter.propose(reqs)
        for seq, r in zip(seqs, reqs):
            if r.k:  # the module consumed every pending hidden state
                self._mtp[seq.request_id] = _MTPState(seq.num_computed_tokens, r.pending_hidden[:0])
        return drafts, qprobs

    def _keep_hidden(self, seq: Sequence, start: int, h: torch.Tensor) -> None:
        s = self._mtp.get(seq.request_id)
        if s is None or s.mtp_pos + s.pending.shape[0] != start:
            # New, re-admitted after preemption, or resumed past a prefix hit: MTP restarts here.
            self._mtp[seq.request_id] = _MTPState(start, h)
        else:
            s.pending = torch.cat([s.pending, h])

    def _finish_plain(self, plain: list[tuple[Sequence, int]], hidden: torch.Tensor, out: StepOutput) -> int:
        """Scheduler rows (prefill chunks, decodes not yet ready to draft): bookkeeping and sampling."""
        row, last_rows, sampled = 0, [], []
        for seq, n in plain:
            self._keep_hidden(seq, seq.num_computed_tokens, hidden[row:row + n])
            if seq.num_computed_tokens + n == seq.num_tokens:
                last_rows.append(row + n - 1)
                sampled.append(seq)
            seq.num_computed_tokens += n
            self.block_manager.register_computed(seq)
            row += n
        if sampled:
            logits = self.model.compute_logits(hidden[torch.tensor(last_rows, device=hidden.device)]).float().cpu()
            tokens, logprobs = engine_sample(logits, sampled)
            for k, seq in enumerate(sampled):
                self._emit(seq, tokens[k], logprobs[k] if logprobs else None, out)
        return row

    def _finish_spec(self, seq: Sequence, drafts: list[int], q: torch.Tensor | None, h: torch.Tensor,
                     out: StepOutput) -> int:
        """Accept drafts, emit tokens, roll the computed length back; returns tokens emitted."""
        N, sp = seq.num_computed_tokens, seq.params
        lg = self.model.compute_logits(h).float().cpu()
        if self.synthetic is not None:
            n_acc, toks = accept_synthetic(drafts, lg, self.synthetic, sp, seq.generator)
        elif sp.temperature == 0:
            n_acc, toks = accept_greedy(drafts, lg)
        else:
            n_acc, toks = accept_rejection(drafts, q if q is not None else lg[:0], processed_probs(lg, sp),
                                           seq.generator)
        if drafts:
            for stats in (self.spec_stats, self.last_step_spec,
                          self.request_spec_stats.setdefault(seq.request_id, SpecStats())):
                stats.record(len(drafts), n_acc)
        self._keep_hidden(seq, N, h[: n_acc + 1])
        logprobs = torch.log_softmax(lg, -1) if sp.logprobs else None
        for i, tok in enumerate(toks):
            if not self._emit(seq, tok, float(logprobs[i, tok]) if logprobs is not None else None, out):
                return i + 1
        seq.num_computed_tokens = N + n_acc + 1  # rollback point: rejected positions are stale from here
        self.block_manager.register_computed(seq)
        return len(toks)

    def _emit(self, seq: Sequence, tok: int, logprob: float | None, out: StepOutput) -> bool:
        """Append one token; False once the request has finished (later tokens of the round are dropped)."""
        seq.token_ids.append(tok)
        if seq.first_token_time is None:
            seq.first_token_time = time.perf_counter()
        if seq.logprobs is not None and logprob is not None:
            seq.logprobs.append(logprob)
        o = self._after_token(seq, tok)
        out.outputs.append(o)
        if o.finished:
            self._mtp.pop(seq.request_id, None)
        return not o.finished
