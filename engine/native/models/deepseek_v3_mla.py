"""Multi-head latent attention (MLA) over a paged cache holding one latent row per token per layer.

The cache row is [kv_lora_rank normalised latent | qk_rope_head_dim roped key]. Few-query steps (decode,
speculative verify) use the absorbed form: the query is mapped into latent space through kv_b_proj's key
half, attends to the latent rows directly, and the value half maps the result back. Long prefill chunks
expand the latents into per-head K/V instead (cheaper when queries outnumber heads x latent width).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from engine.native.attention import AttentionMetadata
from engine.native.models.deepseek_v3_config import DeepseekV3Args, yarn_mscale

# Chunks with at most this many query tokens use the absorbed form.
ABSORB_MAX_QUERIES = 16


def rope_inv_freq(args: DeepseekV3Args) -> tuple[torch.Tensor, float]:
    """Inverse frequencies and cos/sin scale; yarn follows HF `_compute_yarn_parameters` (truncate=True)."""
    r = args.rope
    base, dim = float(r["rope_theta"]), args.qk_rope_head_dim
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    if r.get("rope_type", "default") != "yarn":
        return 1.0 / pos_freqs, 1.0
    factor = float(r["factor"])
    orig = float(r["original_max_position_embeddings"])
    attention_factor = r.get("attention_factor")
    if attention_factor is None:
        if r.get("mscale") and r.get("mscale_all_dim"):
            attention_factor = yarn_mscale(factor, float(r["mscale"])) / yarn_mscale(factor, float(r["mscale_all_dim"]))
        else:
            attention_factor = yarn_mscale(factor)
    beta_fast, beta_slow = float(r.get("beta_fast") or 32), float(r.get("beta_slow") or 1)

    def corr_dim(rot: float) -> float:
        return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))

    low, high = corr_dim(beta_fast), corr_dim(beta_slow)
    if r.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    extrap = 1 - ramp
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrap) + (1.0 / pos_freqs) * extrap
    return inv_freq, float(attention_factor)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, interleave: bool) -> torch.Tensor:
    """x: [T, h, d]; cos/sin: [T, 1, d/2]. Interleaved pairs come out de-interleaved, as in HF (same dot products)."""
    if interleave:
        x1, x2 = x[..., 0::2], x[..., 1::2]
    else:
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def short_chunks(attn: AttentionMetadata):
    """Prefill chunks of <= ABSORB_MAX_QUERIES tokens padded into one batch (rows, valid, slots, mask).

    Built once per step and kept on the metadata object, since every layer sees the same layout."""
    key = ("_mla_short", ABSORB_MAX_QUERIES)
    if key in attn.__dict__:
        return attn.__dict__[key]
    chunks = [c for c in attn.prefills if c.end - c.start <= ABSORB_MAX_QUERIES]
    result = None
    if chunks:
        B = len(chunks)
        n_max = max(c.end - c.start for c in chunks)
        L_max = max(c.slots.shape[0] for c in chunks)
        dev = attn.slot_mapping.device
        rows = torch.zeros(B, n_max, dtype=torch.long, device=dev)
        valid = torch.zeros(B, n_max, dtype=torch.bool, device=dev)
        slots = torch.zeros(B, L_max, dtype=torch.long, device=dev)
        mask = torch.zeros(B, 1, n_max, L_max, dtype=torch.bool, device=dev)
        mask[..., 0] = True  # padding rows attend to one slot so softmax stays finite; they are dropped
        for b, c in enumerate(chunks):
            n, L = c.end - c.start, c.slots.shape[0]
            rows[b, :n] = torch.arange(c.start, c.end, device=dev)
            valid[b, :n] = True
            slots[b, :L] = c.slots
            m = c.mask if c.mask is not None else torch.ones(n, L, dtype=torch.bool, device=dev).tril(L - n)
            mask[b, 0, :n, :L] = m
            mask[b, 0, :n, L:] = False
        result = (rows, valid, slots, mask)
    attn.__dict__[key] = result
    return result


class MLAttention(nn.Module):
    """MLA with low-rank q and kv projections, decoupled rope key, latent cache writes."""

    def __init__(self, args: DeepseekV3Args):
        super().__init__()
        self.args = args
        H, d = args.num_attention_heads, args.hidden_size
        self.num_heads = H
        if args.q_lora_rank:
            self.q_a_proj = nn.Parameter(torch.empty(args.q_lora_rank, d), False)
            self.q_a_layernorm = nn.Parameter(torch.empty(args.q_lora_rank), False)
            self.q_b_proj = nn.Parameter(torch.empty(H * args.qk_head_dim, args.q_lora_rank), False)
        else:
            self.q_proj = nn.Parameter(torch.empty(H * args.qk_head_dim, d), False)
        self.kv_a_proj_with_mqa = nn.Parameter(torch.empty(args.latent_width, d), False)
        self.kv_a_layernorm = nn.Parameter(torch.empty(args.kv_lora_rank), False)
        self.kv_b_proj = nn.Parameter(torch.empty(H * (args.qk_nope_head_dim + args.v_head_dim), args.kv_lora_rank), False)
        self.o_proj = nn.Parameter(torch.empty(d, H * args.v_head_dim), False)
        self.scale = args.softmax_scale()
        self.cache: torch.Tensor | None = None  # [slots, latent_width], bound by the engine

    def absorbed_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """kv_b_proj split per head: W_UK [H, nope, r] and W_UV [H, v, r] (views, no copy)."""
        a = self.args
        w = self.kv_b_proj.view(self.num_heads, a.qk_nope_head_dim + a.v_head_dim, a.kv_lora_rank)
        return w[:, : a.qk_nope_head_dim], w[:, a.qk_nope_head_dim:]

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor:
        a, H, T = self.args, self.num_heads, x.shape[0]
        eps = a.rms_norm_eps
        if a.q_lora_rank:
            q = F.linear(F.rms_norm(F.linear(x, self.q_a_proj), (a.q_lora_rank,), self.q_a_layernorm, eps), self.q_b_proj)
        else:
            q = F.linear(x, self.q_proj)
        q = q.view(T, H, a.qk_head_dim)
        q_nope, q_pe = q[..., : a.qk_nope_head_dim], q[..., a.qk_nope_head_dim:]
        q_pe = apply_rope(q_pe, cos, sin, a.rope_interleave)
        ckv = F.linear(x, self.kv_a_proj_with_mqa)
        latent = F.rms_norm(ckv[:, : a.kv_lora_rank], (a.kv_lora_rank,), self.kv_a_layernorm, eps)
        k_pe = apply_rope(ckv[:, None, a.kv_lora_rank:], cos, sin, a.rope_interleave)[:, 0]
        self.cache.index_copy_(0, attn.slot_mapping, torch.cat([latent, k_pe], dim=-1))
        w_uk, w_uv = self.absorbed_weights()
        o = q_nope.new_empty(T, H, a.v_head_dim)
        nd = attn.num_decode
        if nd:
            ctx = self.cache[attn.decode_slots]  # [Bd, L, W]
            o[:nd] = self._absorbed(q_nope[:nd, None], q_pe[:nd, None], ctx, attn.decode_mask, w_uk, w_uv)[:, 0]
        short = short_chunks(attn)
        if short is not None:
            rows, valid, slots, mask = short
            out = self._absorbed(q_nope[rows], q_pe[rows], self.cache[slots], mask, w_uk, w_uv)
            o[rows[valid]] = out[valid]
        for c in attn.prefills:
            n = c.end - c.start
            if n <= ABSORB_MAX_QUERIES:
                continue
            L = c.slots.shape[0]
            mask = c.mask if c.mask is not None else torch.ones(n, L, dtype=torch.bool, device=x.device).tril(L - n)
            o[c.start:c.end] = self._expanded(q_nope[c.start:c.end], q_pe[c.start:c.end], self.cache[c.slots], mask)
        return F.linear(o.reshape(T, H * a.v_head_dim), self.o_proj)

    def _absorbed(self, q_nope: torch.Tensor, q_pe: torch.Tensor, ctx: torch.Tensor, mask: torch.Tensor,
                  w_uk: torch.Tensor, w_uv: torch.Tensor) -> torch.Tensor:
        """q_*: [B, n, H, .]; ctx: [B, L, W] latent rows; mask: [B, 1, n or 1, L]. Returns [B, n, H, v]."""
        a = self.args
        B, n, H, _ = q_nope.shape
        q_lat = torch.einsum("bnhd,hdr->bnhr", q_nope, w_uk)
        qc = torch.cat([q_lat, q_pe], dim=-1).reshape(B, 1, n * H, a.latent_width)
        # One "kv head" of width r + rope for keys and r for values: the cache rows themselves.
        m = mask.reshape(B, 1, -1, 1, mask.shape[-1]).expand(B, 1, n, H, mask.shape[-1]).reshape(B, 1, n * H, -1)
        o_lat = F.scaled_dot_product_attention(qc, ctx[:, None], ctx[:, None, :, : a.kv_lora_rank],
                                               attn_mask=m, scale=self.scale)
        return torch.einsum("bnhr,hvr->bnhv", o_lat.view(B, n, H, a.kv_lora_rank), w_uv)

    def _expanded(self, q_nope: torch.Tensor, q_pe: torch.Tensor, ctx: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per-head K/V from the latents (HF's form). q_*: [n, H, .]; ctx: [L, W]; mask: [n, L]."""
        a, H = self.args, self.num_heads
        L = ctx.shape[0]
        kv = F.linear(ctx[:, : a.kv_lora_rank], self.kv_b_proj).view(L, H, a.qk_nope_head_dim + a.v_head_dim)
        k_nope, v = kv[..., : a.qk_nope_head_dim], kv[..., a.qk_nope_head_dim:]
        k = torch.cat([k_nope, ctx[:, None, a.kv_lora_rank:].expand(L, H, a.qk_rope_head_dim)], dim=-1)
        q = torch.cat([q_nope, q_pe], dim=-1)
        o = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1),
                                           attn_mask=mask, scale=self.scale)
        return o.transpose(0, 1)
