"""MTP drafting over the paged cache, with the attention metadata builders it needs.

Drafting for one request whose main cache holds positions [0, N) and whose newest token is t_N:
  step 1   MTP module 0 over positions [mtp_pos, N): input (t_{i+1}, main hidden h_i); the last row's
           logits give d_1. Every position's main hidden state is consumed exactly once, so the MTP cache
           stays complete (vLLM's EAGLE/MTP proposer works the same way).
  step j   one row at position N+j-2: input (d_{j-1}, previous MTP output); module (j-1) % num_mtp, so a
           checkpoint with fewer modules than nextn reuses them. Rows written here are overwritten by the
           next round's step 1 before anything reads them.
The main model's hidden state fed to the module is its final-norm output, as vLLM and SGLang feed
DeepSeek's MTP layer; chained steps feed the module's block output before shared_head.norm (vLLM).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.base import SamplingParams
from engine.native.attention import AttentionMetadata, block_slots, prefill_chunk
from engine.native.sampler import draw, filtered_probs


def chunk_meta(items: list[tuple[list[int], int, int]], block_size: int, device: torch.device) -> AttentionMetadata:
    """Each (block_table, s, e) writes positions [s, e) and attends causally over [0, e)."""
    chunks, slot_maps, row = [], [], 0
    for bt, s, e in items:
        chunk, written = prefill_chunk(bt, s, e, row, block_size)
        chunks.append(chunk)
        slot_maps.append(written)
        row += e - s
    return AttentionMetadata(slot_mapping=torch.cat(slot_maps), prefills=chunks).to(device)


def decode_meta(items: list[tuple[list[int], int]], block_size: int, device: torch.device) -> AttentionMetadata:
    """Each (block_table, p) writes one token at position p and attends over [0, p]; padding reads slot 0."""
    L = max(p for _, p in items) + 1
    slots = torch.zeros(len(items), L, dtype=torch.long)
    mask = torch.zeros(len(items), 1, 1, L, dtype=torch.bool)
    for i, (bt, p) in enumerate(items):
        slots[i, : p + 1] = block_slots(bt, 0, p + 1, block_size)
        mask[i, 0, 0, : p + 1] = True
    last = slots[torch.arange(len(items)), torch.tensor([p for _, p in items])]
    return AttentionMetadata(slot_mapping=last, num_decode=len(items), decode_slots=slots, decode_mask=mask).to(device)


@dataclass
class DraftRequest:
    """What the drafter needs from one request (the block table must already cover N + k + 1 tokens)."""

    block_table: list[int]
    token_ids: list[int]  # committed tokens t_0..t_N
    mtp_pos: int  # first position whose main hidden state the MTP module has not consumed
    pending_hidden: torch.Tensor  # main hidden states of positions [mtp_pos, N)
    k: int  # drafts wanted
    params: SamplingParams
    generator: torch.Generator | None
    argmax: bool  # greedy drafts (temperature 0, or the synthetic-acceptance benchmark mode)


class MTPDrafter:
    def __init__(self, model, block_size: int, device: torch.device):
        self.model, self.block_size, self.device = model, block_size, device

    @torch.inference_mode()
    def propose(self, reqs: list[DraftRequest]) -> tuple[list[list[int]], list[torch.Tensor | None]]:
        """Draft tokens per request and, for sampled drafts, the [k, V] distributions they were drawn from."""
        model, bs, dev = self.model, self.block_size, self.device
        drafts: list[list[int]] = [[] for _ in reqs]
        qprobs: list[list[torch.Tensor]] = [[] for _ in reqs]
        active = [i for i, r in enumerate(reqs) if r.k > 0]
        if active:
            spans = [(reqs[i].mtp_pos, len(reqs[i].token_ids) - 1) for i in active]
            ids = torch.cat([torch.tensor(reqs[i].token_ids[s + 1:e + 1]) for i, (s, e) in zip(active, spans)])
            pos = torch.cat([torch.arange(s, e) for s, e in spans])
            prev = torch.cat([reqs[i].pending_hidden for i in active])
            meta = chunk_meta([(reqs[i].block_table, s, e) for i, (s, e) in zip(active, spans)], bs, dev)
            out = model.mtp_forward(0, ids.to(dev), pos.to(dev), prev, meta)
            g = out[torch.tensor([e - s for s, e in spans]).cumsum(0) - 1]
            self._pick(reqs, active, model.mtp_logits(0, g), drafts, qprobs)
            for j in range(2, max(reqs[i].k for i in active) + 1):
                keep = [n for n, i in enumerate(active) if reqs[i].k >= j]
                active, g = [active[n] for n in keep], g[keep]
                m = (j - 1) % model.num_mtp
                ids = torch.tensor([drafts[i][-1] for i in active], device=dev)
                p = [len(reqs[i].token_ids) - 1 + j - 2 for i in active]
                meta = decode_meta([(reqs[i].block_table, q) for i, q in zip(active, p)], bs, dev)
                g = model.mtp_forward(m, ids, torch.tensor(p, device=dev), g, meta)
                self._pick(reqs, active, model.mtp_logits(m, g), drafts, qprobs)
        return drafts, [torch.stack(q) if q else None for q in qprobs]

    @staticmethod
    def _pick(reqs, active, logits, drafts, qprobs) -> None:
        logits = logits.float().cpu()  # per-request generators are CPU generators
        for n, i in enumerate(active):
            r = reqs[i]
            if r.argmax:
                drafts[i].append(int(logits[n].argmax()))
            else:
                q = filtered_probs(logits[n:n + 1], [r.params])
                drafts[i].append(int(draw(q, [r.generator])[0]))
                qprobs[i].append(q[0])
