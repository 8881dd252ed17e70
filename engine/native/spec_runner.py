"""Batched generation over a paged latent KV cache with MTP speculative decoding (self-contained loop).

Reuses the engine's Sequence (per-request seeded generator) and BlockManager (blocks, prefix caching).
Per round and request, with N tokens in the main cache and t_N the newest token:
  draft   MTP step 1 over the positions whose main hidden states are new (input t_{i+1}, h_i), then
          steps 2..nextn one token each, feeding back the draft and the module's own output
          (module (step-1) % num_mtp, i.e. one module is reused when nextn exceeds the checkpoint's count);
  verify  one main forward over [t_N, d_1..d_k] at positions N..N+k;
  accept  greedy prefix match, rejection sampling (temperature > 0), or the synthetic mode;
  rollback the main cache's computed length becomes N + accepted + 1: rows of rejected positions are never
          read again and are overwritten by the next round (their blocks stay with the request).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import torch

from engine.base import EngineError, SamplingParams
from engine.native.block_manager import BlockManager
from engine.native.sequence import Sequence, SeqStatus
from engine.native.spec_decode import (SpecStats, SyntheticAcceptance, accept_greedy, accept_rejection,
                                       accept_synthetic, processed_probs, sample)
from engine.native.spec_mtp import DraftRequest, MTPDrafter, chunk_meta, decode_meta


@dataclass
class GenerationOutput:
    request_id: str
    prompt_token_ids: list[int]
    token_ids: list[int]
    finish_reason: str
    num_cached_tokens: int
    spec: SpecStats
    logits: list[torch.Tensor] | None = None  # the logits row behind each emitted token (record_logits=True)


@dataclass
class _Req:
    seq: Sequence
    spec: SpecStats = field(default_factory=SpecStats)
    pending_hidden: torch.Tensor | None = None  # main hidden states of positions [mtp_pos, num_computed)
    mtp_pos: int = 0
    logits: list[torch.Tensor] = field(default_factory=list)


class SpecDecodeRunner:
    """Generate for a batch of token prompts with a DeepseekV3Model; nextn=0 is plain decoding."""

    def __init__(self, model, *, num_blocks: int = 256, block_size: int = 16, nextn: int = 0,
                 synthetic_acceptance: float | None = None, seed: int = 0, max_prefill_chunk: int | None = None,
                 enable_prefix_caching: bool = True, max_num_seqs: int = 64, record_logits: bool = False):
        if nextn and model.num_mtp == 0:
            raise EngineError("speculative decoding needs MTP weights; this checkpoint has none "
                              f"(expected model.layers.{model.args.num_hidden_layers}.*)")
        self.model, self.nextn, self.block_size = model, nextn, block_size
        self.max_prefill_chunk, self.max_num_seqs, self.record_logits = max_prefill_chunk, max_num_seqs, record_logits
        self.synthetic = SyntheticAcceptance(synthetic_acceptance, seed) if synthetic_acceptance is not None else None
        n_layers = model.args.num_hidden_layers + model.num_mtp
        p = model.embed_tokens
        self.caches = [torch.zeros(num_blocks * block_size, model.args.latent_width, dtype=p.dtype, device=p.device)
                       for _ in range(n_layers)]
        model.bind_kv_cache([(c, None) for c in self.caches])
        self.blocks = BlockManager(num_blocks, block_size, enable_prefix_caching)
        self.stats = SpecStats()
        self.device = p.device
        self.drafter = MTPDrafter(model, block_size, p.device)
        self._next_id = 0

    # ---- public API ---------------------------------------------------------------------------------------
    @torch.inference_mode()
    def generate(self, prompts: list[list[int]], params: SamplingParams | list[SamplingParams]) -> list[GenerationOutput]:
        plist = params if isinstance(params, list) else [params] * len(prompts)
        reqs = []
        for ids, sp in zip(prompts, plist):
            self._next_id += 1
            reqs.append(_Req(Sequence(f"req-{self._next_id}", list(ids), sp)))
        waiting, running = deque(reqs), []
        while waiting or running:
            while waiting and len(running) < self.max_num_seqs and self._admit(waiting[0]):
                running.append(waiting.popleft())
            if not running:
                raise EngineError("KV cache too small for the next request")
            self.step(running)
            for r in [r for r in running if r.seq.is_finished]:
                self.blocks.free_seq(r.seq)
                running.remove(r)
        return [GenerationOutput(r.seq.request_id, r.seq.token_ids[:r.seq.num_prompt_tokens], r.seq.output_token_ids,
                                 r.seq.finish_reason or "length", r.seq.num_cached_tokens, r.spec,
                                 r.logits if self.record_logits else None) for r in reqs]

    def step(self, running: list[_Req]) -> None:
        """One scheduling step: prefill chunks for prompts, then a decode or draft+verify round for the rest."""
        prefilling = [r for r in running if r.seq.num_computed_tokens < r.seq.num_tokens - 1]
        decoding = [r for r in running if r.seq.num_computed_tokens == r.seq.num_tokens - 1]
        if prefilling:
            self._prefill(prefilling)
        if decoding:
            self._spec_round(decoding) if self.nextn else self._decode(decoding)

    # ---- phases -------------------------------------------------------------------------------------------
    def _admit(self, r: _Req) -> bool:
        seq = r.seq
        cached = len(self.blocks.lookup_prefix(seq)) * self.block_size
        if not self.blocks.admit(seq, seq.num_tokens - cached):
            return False
        seq.status = SeqStatus.RUNNING
        r.mtp_pos = seq.num_computed_tokens
        return True

    def _prefill(self, reqs: list[_Req]) -> None:
        items = []
        for r in reqs:
            s = r.seq.num_computed_tokens
            e = r.seq.num_tokens if self.max_prefill_chunk is None else min(r.seq.num_tokens, s + self.max_prefill_chunk)
            items.append((r, s, e))
        hidden = self._main(items)
        row = 0
        for r, s, e in items:
            h = hidden[row:row + e - s]
            row += e - s
            r.seq.num_computed_tokens = e
            self._keep_hidden(r, h)
            if e == r.seq.num_tokens:  # prompt done: its last row gives the first output token
                logits = self.model.compute_logits(h[-1:]).float().cpu()[0]
                self._emit(r, [self._pick(r, logits)], [logits])
            self.blocks.register_computed(r.seq)

    def _decode(self, reqs: list[_Req]) -> None:
        for r in reqs:
            self._grow(r, r.seq.num_tokens)
        ids = torch.tensor([r.seq.token_ids[-1] for r in reqs], device=self.device)
        pos = [r.seq.num_tokens - 1 for r in reqs]
        meta = decode_meta([(r.seq.block_table, p) for r, p in zip(reqs, pos)], self.block_size, self.device)
        hidden = self.model(ids, torch.tensor(pos, device=self.device), meta)
        logits = self.model.compute_logits(hidden).float().cpu()
        for i, r in enumerate(reqs):
            r.seq.num_computed_tokens = pos[i] + 1
            self._emit(r, [self._pick(r, logits[i])], [logits[i]])
            self.blocks.register_computed(r.seq)

    def _spec_round(self, reqs: list[_Req]) -> None:
        model = self.model
        # No drafts without main hidden states to draft from (a prefix hit can leave only the last prompt
        # token to compute, which then runs as a plain verify of one token).
        ks = [min(self.nextn, r.seq.params.max_tokens - r.seq.num_output_tokens - 1)
              if r.pending_hidden is not None and r.pending_hidden.shape[0] > 0 else 0 for r in reqs]
        for r, k in zip(reqs, ks):
            self._grow(r, r.seq.num_tokens + k)
        drafts, qprobs = self.drafter.propose([
            DraftRequest(r.seq.block_table, r.seq.token_ids, r.mtp_pos, r.pending_hidden, k, r.seq.params,
                         r.seq.generator, r.seq.params.temperature == 0 or self.synthetic is not None)
            for r, k in zip(reqs, ks)])
        for r, k in zip(reqs, ks):
            if k > 0:
                r.mtp_pos = r.seq.num_tokens - 1
        # Verify: one main forward over [t_N, d_1..d_k] per request.
        items = [(r, r.seq.num_tokens - 1, r.seq.num_tokens + len(d)) for r, d in zip(reqs, drafts)]
        hidden = self._main(items, extra_ids=drafts)
        logits = model.compute_logits(hidden).float().cpu()  # sampling uses CPU generators
        row = 0
        for (r, s, e), d, q in zip(items, drafts, qprobs):
            lg = logits[row:row + e - s]
            h = hidden[row:row + e - s]
            row += e - s
            sp, gen = r.seq.params, r.seq.generator
            if self.synthetic is not None:
                n_acc, toks = accept_synthetic(d, lg, self.synthetic, sp, gen)
            elif sp.temperature == 0:
                n_acc, toks = accept_greedy(d, lg)
            else:
                n_acc, toks = accept_rejection(d, q if q is not None else lg[:0], processed_probs(lg, sp), gen)
            if d:
                r.spec.record(len(d), n_acc)
                self.stats.record(len(d), n_acc)
            r.seq.num_computed_tokens = s + n_acc + 1  # rollback: rows past this are stale
            self._keep_hidden(r, h[: n_acc + 1])
            self._emit(r, toks, [lg[i] for i in range(n_acc + 1)])
            # A stop token among the accepted drafts ends the request early: computed <= tokens held.
            r.seq.num_computed_tokens = min(r.seq.num_computed_tokens, r.seq.num_tokens)
            self.blocks.register_computed(r.seq)

    # ---- helpers ------------------------------------------------------------------------------------------
    def _pick(self, r: _Req, logits: torch.Tensor) -> int:
        sp = r.seq.params
        return int(logits.argmax()) if sp.temperature == 0 else sample(processed_probs(logits, sp), r.seq.generator)

    def _emit(self, r: _Req, toks: list[int], rows: list[torch.Tensor]) -> None:
        """Append tokens, stopping at a stop/eos id or max_tokens (later tokens are dropped)."""
        seq, sp = r.seq, r.seq.params
        stop_ids = set(sp.stop_token_ids) | set(self.model.args.eos_token_ids)
        for t, row in zip(toks, rows):
            seq.token_ids.append(t)
            if self.record_logits:
                r.logits.append(row.detach().clone())
            if t in stop_ids:
                seq.status, seq.finish_reason = SeqStatus.FINISHED, "stop"
                return
            if seq.num_output_tokens >= sp.max_tokens:
                seq.status, seq.finish_reason = SeqStatus.FINISHED, "length"
                return

    def _keep_hidden(self, r: _Req, h: torch.Tensor) -> None:
        if not self.nextn:
            return
        r.pending_hidden = h if r.pending_hidden is None else torch.cat([r.pending_hidden, h])
        # Positions below mtp_pos were consumed by the MTP module already.
        excess = r.pending_hidden.shape[0] - (r.seq.num_computed_tokens - r.mtp_pos)
        if excess > 0:
            r.pending_hidden = r.pending_hidden[excess:]

    def _grow(self, r: _Req, num_tokens: int) -> None:
        if not self.blocks.can_grow(r.seq, num_tokens):
            raise EngineError("KV cache blocks exhausted (the self-contained runner does not preempt)")
        self.blocks.grow(r.seq, num_tokens)

    def _main(self, items: list[tuple[_Req, int, int]], extra_ids: list[list[int]] | None = None) -> torch.Tensor:
        """Main-model forward over positions [s, e) of each request (drafts appended as the tail ids)."""
        ids = []
        for n, (r, s, e) in enumerate(items):
            toks = r.seq.token_ids[s:e] if extra_ids is None else r.seq.token_ids[s:] + extra_ids[n]
            ids.append(torch.tensor(toks[: e - s]))
        pos = torch.cat([torch.arange(s, e) for _, s, e in items]).to(self.device)
        meta = chunk_meta([(r.seq.block_table, s, e) for r, s, e in items], self.block_size, self.device)
        return self.model(torch.cat(ids).to(self.device), pos, meta)
