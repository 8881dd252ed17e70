"""Paged attention over a flat slot-indexed KV cache, and the metadata that describes one step."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F


@dataclass
class KVCacheSpec:
    """What a model stores per token per layer: K shape and V shape (None when K holds everything)."""

    num_layers: int
    k_shape: tuple[int, ...]
    v_shape: tuple[int, ...] | None

    def bytes_per_token(self, dtype: torch.dtype) -> int:
        n = 1
        for s in self.k_shape:
            n *= s
        m = 0
        if self.v_shape is not None:
            m = 1
            for s in self.v_shape:
                m *= s
        return self.num_layers * (n + m) * torch.empty((), dtype=dtype).element_size()


@dataclass
class PrefillChunk:
    """One sequence's prefill chunk: batch rows [start, end) attending to context slots `slots`."""

    start: int
    end: int
    slots: torch.Tensor  # [ctx] long, cache rows of every context token including this chunk
    mask: torch.Tensor | None  # [n, ctx] bool (True = attend); None means plain causal (no cached prefix)


@dataclass
class AttentionMetadata:
    """Batch layout for one forward: decode rows first (one token each), then prefill chunks."""

    slot_mapping: torch.Tensor  # [T] long, cache row each new token's K/V is written to
    num_decode: int = 0
    decode_slots: torch.Tensor | None = None  # [Bd, L] long, padded with slot 0
    decode_mask: torch.Tensor | None = None  # [Bd, 1, 1, L] bool, True = attend
    prefills: list[PrefillChunk] = field(default_factory=list)


def paged_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                    attn: AttentionMetadata) -> torch.Tensor:
    """q: [T, Hq, D]; caches: [slots, Hkv, D] already holding this step's K/V. Returns [T, Hq*D]."""
    T, Hq, D = q.shape
    gqa = Hq != k_cache.shape[1]
    outs = []
    nd = attn.num_decode
    if nd:
        # Gather each sequence's context (a copy; plain PyTorch has no in-place paged kernel).
        k = k_cache[attn.decode_slots].transpose(1, 2)  # [Bd, Hkv, L, D]
        v = v_cache[attn.decode_slots].transpose(1, 2)
        o = F.scaled_dot_product_attention(q[:nd].unsqueeze(2), k, v, attn_mask=attn.decode_mask, enable_gqa=gqa)
        outs.append(o.reshape(nd, Hq * D))
    for c in attn.prefills:
        qc = q[c.start:c.end].transpose(0, 1)  # [Hq, n, D]
        k = k_cache[c.slots].transpose(0, 1)  # [Hkv, ctx, D]
        v = v_cache[c.slots].transpose(0, 1)
        if c.mask is None:
            o = F.scaled_dot_product_attention(qc, k, v, is_causal=True, enable_gqa=gqa)
        else:
            o = F.scaled_dot_product_attention(qc, k, v, attn_mask=c.mask, enable_gqa=gqa)
        outs.append(o.transpose(0, 1).reshape(c.end - c.start, Hq * D))
    return outs[0] if len(outs) == 1 else torch.cat(outs, 0)
