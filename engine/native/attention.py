"""Paged attention over a flat slot-indexed KV cache, and the metadata that describes one step."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch
import torch.nn.functional as F

from engine.base import EngineError
from engine.native import kernels
from engine.native.kv_quant import check_head_dim, dequantize_rows, row_bytes


@dataclass
class KVCacheSpec:
    """What a model stores per token per layer: K shape and V shape (None when K holds everything)."""

    num_layers: int
    k_shape: tuple[int, ...]
    v_shape: tuple[int, ...] | None
    slot_axis: int = 0  # where the slot axis goes in the allocated tensor (Llama: heads first, then slots)

    def tensor_shape(self, per_token: tuple[int, ...], num_slots: int) -> tuple[int, ...]:
        shape = list(per_token)
        shape.insert(self.slot_axis, num_slots)
        return tuple(shape)

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

    def int8_rows(self) -> "KVCacheSpec":
        """This spec for a cache of 8-bit rows (kv_quant.py): each K/V head's D values become row_bytes(D) int8."""
        if self.v_shape is not None or len(self.k_shape) != 2:
            raise EngineError("kv_cache_dtype int8 applies to models that cache K and V heads (Llama, Qwen2, Qwen3, "
                              "Mistral), not to this model's cache layout")
        check_head_dim(self.k_shape[1])
        return replace(self, k_shape=(self.k_shape[0], row_bytes(self.k_shape[1])))


@dataclass
class PrefillChunk:
    """One sequence's prefill chunk: batch rows [start, end) attending to context slots `slots`."""

    start: int
    end: int
    slots: torch.Tensor  # [ctx] long, cache rows of every context token including this chunk
    mask: torch.Tensor | None  # [n, ctx] bool (True = attend); None means plain causal (no cached prefix)


class Workspace:
    """One growing scratch buffer, reused by every layer and step: the decode KV gather is large (tens of MB at
    64 requests), and a fresh allocation of that size costs page faults on every layer."""

    def __init__(self):
        self._buf: torch.Tensor | None = None

    def get(self, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        n = 1
        for s in shape:
            n *= s
        b = self._buf
        if b is None or b.numel() < n or b.dtype != dtype or b.device != device:
            b = self._buf = torch.empty(n, dtype=dtype, device=device)
        return b[:n].view(shape)


@dataclass
class AttentionMetadata:
    """Batch layout for one forward: decode rows first (one token each), then prefill chunks."""

    slot_mapping: torch.Tensor  # [T] long, cache row each new token's K/V is written to
    num_decode: int = 0
    decode_slots: torch.Tensor | None = None  # [Bd, L] long, padded with slot 0
    decode_mask: torch.Tensor | None = None  # [Bd, 1, 1, L] bool, True = attend
    prefills: list[PrefillChunk] = field(default_factory=list)
    # Block-level view of the decode rows, when the runner provides it: L = blocks per row * block_size, and
    # every slot of an allocated block is either written by its owner or zero (BlockManager on_allocate).
    decode_blocks: torch.Tensor | None = None  # [Bd, L / block_size] long, padded with the null block 0
    decode_max_len: int = 0  # longest decode row's true context length
    decode_lens: torch.Tensor | None = None  # [Bd] long, each decode row's true context length
    block_size: int = 0
    workspace: Workspace | None = None
    in_place: bool = True  # decode attention may read the cache in place (compiled kernel) when it is available

    def to(self, device: torch.device) -> "AttentionMetadata":
        """Move the index tensors (built on the CPU) to the model's device."""
        if device.type == "cpu":
            return self
        self.slot_mapping = self.slot_mapping.to(device)
        for name in ("decode_slots", "decode_mask", "decode_blocks", "decode_lens"):
            if getattr(self, name) is not None:
                setattr(self, name, getattr(self, name).to(device))
        for c in self.prefills:
            c.slots = c.slots.to(device)
            c.mask = c.mask.to(device) if c.mask is not None else None
        return self


def block_slots(block_table: list[int], start: int, end: int, block_size: int) -> torch.Tensor:
    """Cache rows of positions [start, end) of a sequence with this block table."""
    bt = torch.tensor(block_table, dtype=torch.long)
    p = torch.arange(start, end)
    return bt[p // block_size] * block_size + p % block_size


def prefill_chunk(block_table: list[int], start: int, end: int, row: int,
                  block_size: int) -> tuple[PrefillChunk, torch.Tensor]:
    """Batch rows [row, row + end - start) write positions [start, end) and attend causally over [0, end);
    also returns the cache rows they write."""
    ctx = block_slots(block_table, 0, end, block_size)
    mask = None if start == 0 else torch.arange(end)[None, :] <= torch.arange(start, end)[:, None]
    return PrefillChunk(row, row + end - start, ctx, mask), ctx[start:]


def _decode_lens(attn: AttentionMetadata) -> torch.Tensor:
    # the mask is each row's valid prefix, so its count is the row's context length
    return attn.decode_lens if attn.decode_lens is not None else attn.decode_mask.reshape(attn.num_decode, -1).sum(-1)


def _window_mask(attn: AttentionMetadata, window: int | None) -> torch.Tensor:
    """[Bd, L] bool: the decode rows' valid positions, within the last `window` of each row when one is set."""
    m = attn.decode_mask.reshape(attn.decode_mask.shape[0], -1)
    if window is None:
        return m
    p = torch.arange(m.shape[1], device=m.device)
    return m & (p[None, :] >= (_decode_lens(attn) - window)[:, None])


def _decode_bias(attn: AttentionMetadata, dtype: torch.dtype, hkv: int, g: int,
                 window: int | None = None) -> torch.Tensor:
    """Additive mask [Hkv*Bd, G, L] (0 or -inf), built once per step and shared by every layer."""
    key = ("_decode_bias", dtype, hkv, g, window)
    bias = attn.__dict__.get(key)
    if bias is None:
        m = _window_mask(attn, window).reshape(1, attn.decode_mask.shape[0], 1, -1)
        bias = torch.zeros(m.shape, dtype=dtype, device=m.device).masked_fill_(~m, float("-inf"))
        bias = bias.expand(hkv, -1, g, -1).reshape(-1, g, m.shape[-1])
        attn.__dict__[key] = bias
    return bias


def _gather_decode_kv(kv_cache: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor:
    """Copy every decode row's K and V into [2*Hkv, nd, L, D] (plain PyTorch has no paged kernel).
    By whole blocks, one K or V head plane at a time: a dim-0 index_select of block_size*D-element rows runs
    near memcpy speed, ~2.5x faster than selecting D-element slot rows along dim 1."""
    P, S, D = kv_cache.shape
    nd = attn.num_decode
    if attn.decode_blocks is None or attn.workspace is None:
        return kv_cache.index_select(1, attn.decode_slots.reshape(-1)).view(P, nd, -1, D)
    bs = attn.block_size
    ids = attn.decode_blocks.reshape(-1)
    planes = kv_cache.view(P, S // bs, bs * D)
    out = attn.workspace.get((P, ids.numel(), bs * D), kv_cache.dtype, kv_cache.device)
    for h in range(P):
        torch.index_select(planes[h], 0, ids, out=out[h])
    return out.view(P, nd, -1, D)


def compiled_kernels_for(kv_cache: torch.Tensor) -> bool:
    """Whether the compiled kernels (engine/native/kernels) serve this cache: CPU, float32, bfloat16 or 8-bit rows
    (kv_quant.py), built."""
    return (kv_cache.device.type == "cpu" and kv_cache.dtype in (torch.float32, torch.bfloat16, torch.int8)
            and kernels.load())


def _readable(kv: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """K/V copied out of the cache, as values of `dtype` (8-bit rows are dequantised; other caches are already)."""
    return dequantize_rows(kv, dtype) if kv.dtype == torch.int8 else kv


def reads_in_place(kv_cache: torch.Tensor, attn: AttentionMetadata) -> bool:
    """Whether this step's decode rows can use the compiled kernel that reads K/V blocks in place."""
    return (attn.in_place and attn.decode_blocks is not None and attn.decode_lens is not None
            and kernels.SPLIT % attn.block_size == 0 and compiled_kernels_for(kv_cache))


def _prefill_window(c: PrefillChunk, n: int, window: int | None, device: torch.device) -> torch.Tensor | None:
    """The chunk's mask [n, ctx] with keys older than the window cut off (None: plain causal, no window needed)."""
    ctx = c.slots.shape[0]
    if window is None or ctx <= window:
        return c.mask
    qpos = torch.arange(ctx - n, ctx, device=device)[:, None]
    kpos = torch.arange(ctx, device=device)[None, :]
    return (kpos <= qpos) & (kpos > qpos - window)


def paged_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_cache: torch.Tensor,
                    attn: AttentionMetadata, window: int | None = None) -> torch.Tensor:
    """q: [T, Hq, D]; k, v: [T, Hkv, D] of this step (already written to the cache);
    kv_cache: [2*Hkv, slots, D] (K heads then V heads, slot-indexed; or int8 8-bit rows, kv_quant.py). Returns
    [T, Hq*D].
    window: each query attends to its own position and the window - 1 before it (sliding-window attention)."""
    T, Hq, D = q.shape
    Hkv = kv_cache.shape[0] // 2
    G = Hq // Hkv
    scale = D ** -0.5
    outs = []
    nd = attn.num_decode
    # While every decode row still fits its window nothing is cut off, and the compiled kernel serves them.
    decode_window = None if window is None or 0 < attn.decode_max_len <= window else window
    if nd and decode_window is None and reads_in_place(kv_cache, attn):
        # No copy of the context: each row's blocks are read where they lie (engine/native/kernels).
        outs.append(kernels.paged_decode_attention(q[:nd], kv_cache, attn.decode_blocks, attn.decode_lens,
                                                   attn.block_size, scale))
        nd = 0
    if nd:
        ctx = _readable(_gather_decode_kv(kv_cache, attn), q.dtype)  # [2*Hkv, nd, L, D]
    if nd == 1 and q.dtype != torch.float32:
        # A lone decode needs no mask once cut to its true length, and the CPU flash kernel, with the G query
        # heads of a KV head as G query rows, is ~2x faster than the matmuls below. fp32 keeps one path for
        # every batch size, so a request's greedy tokens never depend on what else is running (tested).
        end = attn.decode_max_len or ctx.shape[2]
        start = max(0, end - decode_window) if decode_window else 0
        ctx = ctx[:, :, start:end].transpose(0, 1)  # [1, 2*Hkv, len, D]
        o = F.scaled_dot_product_attention(q[:1].view(1, Hkv, G, D), ctx[:, :Hkv], ctx[:, Hkv:])
        outs.append(o.reshape(1, Hq * D))
    elif nd:
        L = ctx.shape[2]
        # The gathered K and V are already [head, seq, pos, dim], so the batched matmuls read them without
        # further copies.
        kd = ctx[:Hkv].reshape(Hkv * nd, L, D)
        vd = ctx[Hkv:].reshape(Hkv * nd, L, D)
        qd = q[:nd].view(nd, Hkv, G, D).transpose(0, 1).reshape(Hkv * nd, G, D)
        s = torch.baddbmm(_decode_bias(attn, q.dtype, Hkv, G, decode_window), qd, kd.transpose(1, 2), alpha=scale)
        p = torch.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.bmm(p, vd).view(Hkv, nd, G, D).transpose(0, 1)
        outs.append(o.reshape(nd, Hq * D))
    for c in attn.prefills:
        # [1, H, n, D]: the CPU flash kernel wants 4-D inputs, and runs ~15% faster on contiguous ones than on
        # these strided views of the fused q/k/v rows, copies included.
        qc = q[c.start:c.end].transpose(0, 1).contiguous()[None]
        mask = _prefill_window(c, c.end - c.start, window, q.device)
        if c.mask is None:  # no cached prefix: this chunk's own K/V are the whole context
            kc = k[c.start:c.end].transpose(0, 1).contiguous()[None]
            vc = v[c.start:c.end].transpose(0, 1).contiguous()[None]
            o = F.scaled_dot_product_attention(qc, kc, vc, attn_mask=mask, is_causal=mask is None, enable_gqa=G != 1)
        else:
            ctx = _readable(kv_cache.index_select(1, c.slots), q.dtype)[None]  # [1, 2*Hkv, ctx, D]
            o = F.scaled_dot_product_attention(qc, ctx[:, :Hkv], ctx[:, Hkv:], attn_mask=mask, enable_gqa=G != 1)
        outs.append(o[0].transpose(0, 1).reshape(c.end - c.start, Hq * D))
    return outs[0] if len(outs) == 1 else torch.cat(outs, 0)
