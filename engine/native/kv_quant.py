"""8-bit K/V rows: the KV cache in half the bytes (`kv_cache_dtype="int8"`).

A row holds one head's D values of one token as D signed 8-bit codes followed by one float32 scale per 32 values
(the scale's 4 bytes stored in the row itself): value = code * scale, scale = amax / 127 of its 32 values, code =
round-half-even(value / scale). It is llama.cpp's Q8_0 block with a float32 scale, kept per row so that every
slot-indexed operation on the cache (block zeroing, gathers, the in-place decode kernel) works on whole rows as
before; a zeroed row reads back as zeros. For D = 64: 72 bytes per row against 128 in bf16.

This is the reference the compiled write (rope.cpp, harness_quantize_q8) matches bit for bit, and the form the
plain PyTorch paths (prefill over a cached prefix, decode without the compiled kernel) read back.
"""
from __future__ import annotations

import torch

from engine.base import EngineError

GROUP = 32  # values per scale
SCALE_BYTES = 4  # float32
KV_CACHE_DTYPES = ("auto", "int8")  # auto: the model's dtype


def row_bytes(head_dim: int) -> int:
    """Bytes of one 8-bit row of head_dim values."""
    return head_dim + head_dim // GROUP * SCALE_BYTES


def head_dim_of(row: int) -> int:
    """head_dim of an 8-bit row of `row` bytes (inverse of row_bytes)."""
    return row * GROUP // (GROUP + SCALE_BYTES)


def check_head_dim(head_dim: int) -> None:
    if head_dim % GROUP:
        raise EngineError(f"kv_cache_dtype int8 needs a head size that is a multiple of {GROUP} (this model's: {head_dim})")


def quantize_rows(x: torch.Tensor) -> torch.Tensor:
    """x [..., D] (any float dtype) -> int8 rows [..., row_bytes(D)]."""
    D = x.shape[-1]
    groups = x.float().reshape(*x.shape[:-1], D // GROUP, GROUP)
    scale = groups.abs().amax(-1) / 127
    codes = torch.where(scale[..., None] > 0, torch.round(groups / scale[..., None]), 0.0).clamp_(-127, 127)
    codes = codes.to(torch.int8).reshape(*x.shape[:-1], D)
    return torch.cat((codes, scale.contiguous().view(torch.int8)), -1)


def dequantize_rows(rows: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """int8 rows [..., row_bytes(D)] -> values [..., D] in `dtype` (code * scale in float32, rounded once)."""
    D = head_dim_of(rows.shape[-1])
    scale = rows[..., D:].contiguous().view(torch.float32)
    codes = rows[..., :D].reshape(*rows.shape[:-1], D // GROUP, GROUP).float()
    return (codes * scale[..., None]).reshape(*rows.shape[:-1], D).to(dtype)


def resolve_kv_dtype(kv_cache_dtype: str | None, model_dtype: torch.dtype) -> torch.dtype:
    """The cache's element type for an engine's kv_cache_dtype option."""
    if kv_cache_dtype in (None, "auto"):
        return model_dtype
    if kv_cache_dtype == "int8":
        return torch.int8
    raise EngineError(f"kv_cache_dtype must be one of {', '.join(KV_CACHE_DTYPES)}, not {kv_cache_dtype!r}")
