"""4-bit weights kept as a GGUF file stores them, multiplied with torch's CPU int4 kernel.

At small batch sizes a decode step is bound by reading weights. A GGUF Q4_0/Q4_1 matrix holds, per group of
32 inputs, 4-bit codes q with an fp16 scale d (and, for Q4_1, a minimum m): w = d*q + m (Q4_1) or
w = d*(q - 8) (Q4_0). torch's `_weight_int4pack_mm_for_cpu` computes with w = (q - 8)*scale + zero per group
of 32, so the file's codes map onto it without requantising: scale = d, zero = m + 8d (Q4_1) or 0 (Q4_0).
Scale and zero are held in bf16, which the kernel requires; the dense bf16 weights round to that precision too.
Reading 0.625 bytes per weight (codes plus a bf16 scale and zero per 32) instead of 2 (bf16) makes the weight
matmuls of a single-stream step ~4x faster here; from about 16 rows per step the dense bf16 matmul is faster
again, so both forms are kept.

Where oneDNN's bf16 matmul runs without AMX (AVX-512 BF16 CPUs such as AMD EPYC), larger steps use the same
codes too (VnniLinear): activations quantized to 8 bits per group of 32 and integer dot products with AVX-512
VNNI (kernels/int8_vnni.cpp), as llama.cpp multiplies Q4 weights with Q8_0 activations.

Storage form (our own, stable across torch versions): codes as uint8 [N, K/2] with the even column in the
low nibble, scale and zero as float32 [N, K/32]. torch's packed layout is built from it at load time.
"""
from __future__ import annotations

import os

import numpy as np
import torch

GROUP = 32
SUFFIXES = (".q4", ".q4_scale", ".q4_zero")  # tensor-name suffixes of the three parts in a weights dict

# Up to this many rows per step the int4 kernel beats the dense bf16 matmul. Measured on the 2-core
# development machine, all 120 layer matrices of SmolLM2-135M, 2 threads, int4 vs bf16 ms: 3.1 vs 11.9 at
# 1 row, 6.7 vs 11.5 at 8, 9.8 vs 12.8 at 12, 13.2 vs 13.8 at 16, 18.4 vs 15.7 at 24.
MAX_ROWS = 12


def from_gguf_blocks(raw: np.ndarray, kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A GGUF Q4_0/Q4_1 tensor's bytes [N, row_bytes] -> (codes uint8 [N, K/2], scale, zero float32 [N, K/32])."""
    block_bytes = {"Q4_0": 18, "Q4_1": 20}[kind]
    n = raw.shape[0]
    blocks = np.ascontiguousarray(raw).reshape(n, -1, block_bytes)
    d = blocks[..., 0:2].copy().view(np.float16)[..., 0].astype(np.float32)
    if kind == "Q4_1":
        m = blocks[..., 2:4].copy().view(np.float16)[..., 0].astype(np.float32)
        zero, qs = m + 8 * d, blocks[..., 4:]
    else:
        zero, qs = np.zeros_like(d), blocks[..., 2:]
    # GGUF puts code j in the low nibble and code j+16 in the high nibble of byte j of each block.
    codes = np.concatenate([qs & 15, qs >> 4], axis=-1).reshape(n, -1)  # [N, K]
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    return torch.from_numpy(packed), torch.from_numpy(d), torch.from_numpy(zero)


def dequantize(codes: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor) -> torch.Tensor:
    """The float32 matrix the three parts stand for (tests and reference paths)."""
    q = unpack_codes(codes).float()
    s = scale.repeat_interleave(GROUP, dim=1)
    z = zero.repeat_interleave(GROUP, dim=1)
    return (q - 8) * s + z


def unpack_codes(codes: torch.Tensor) -> torch.Tensor:
    return torch.stack((codes & 15, codes >> 4), dim=-1).reshape(codes.shape[0], -1)


# Where oneDNN's bf16 matmul has no AMX, steps of more than MAX_ROWS rows (batched decode and prefill) multiply
# with the codes against 8-bit activations (VnniLinear): measured with oneDNN capped below AMX on the development
# machine (1 thread, A/B, load average ~8), 64 rows 3-4x and 512-2,048 rows 2.1x faster than packed bf16; with
# AMX, bf16 is 3-5x faster than VNNI, so it stays. Opt-in, because 8-bit activations change what a model writes
# (greedy tokens match fp32 on ~94% of rows against bf16's 100%): HARNESS_VNNI=auto uses it where oneDNN has no
# AMX, =1 even with AMX; unset or 0, the bf16 path.
_vnni_enabled = True


def vnni_wanted() -> bool:
    """Whether to build VnniLinear forms: asked for (HARNESS_VNNI=auto|1), the CPU has AVX-512 VNNI, and (auto)
    oneDNN's bf16 matmul runs without AMX."""
    from engine.native import kernels, packed_weights
    mode = os.environ.get("HARNESS_VNNI", "0")
    if mode == "0" or not kernels.load() or not kernels.vnni_available():
        return False
    return mode == "1" or not packed_weights.onednn_uses_amx()


def vnni_enabled() -> bool:
    return _vnni_enabled


def set_vnni_enabled(on: bool) -> None:
    """Use the VnniLinear forms built at load (True) or the bf16 path instead (benchmarks compare both)."""
    global _vnni_enabled
    _vnni_enabled = on


def available() -> bool:
    return hasattr(torch.ops.aten, "_weight_int4pack_mm_for_cpu")


class Int4Linear:
    """y = x @ W.T with W held as 4-bit codes; x must be bf16 on the CPU (the kernel's fast path)."""

    def __init__(self, codes: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, dtype: torch.dtype):
        n, half_k = codes.shape
        self.out_features, self.in_features = n, 2 * half_k
        self.packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(unpack_codes(codes).to(torch.int32), 1)
        self.scale_zero = torch.stack((scale.t(), zero.t()), dim=-1).to(dtype).contiguous()  # [K/32, N, 2]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.aten._weight_int4pack_mm_for_cpu(x, self.packed, GROUP, self.scale_zero)

    def nbytes(self) -> int:
        return self.packed.numel() + self.scale_zero.numel() * self.scale_zero.element_size()  # packed is uint8


class VnniLinear:
    """y = x @ W.T for steps of 13+ rows: the same codes against activations quantized to 8 bits per group of 32, with
    AVX-512 VNNI integer dot products (kernels/int8_vnni.cpp; llama.cpp's Q8_0 x Q4 scheme). x bf16 on the CPU.
    Also takes 8-bit codes (the logits head): codes are unsigned, so w = d * u + c covers both."""

    def __init__(self, codes: torch.Tensor, d: torch.Tensor, c: torch.Tensor):
        """codes uint8 [N, K] (one per weight); d, c float32 [N, K/32]: w = d * code + c per group of 32."""
        from engine.native import kernels
        n, k = codes.shape
        self.out_features, self.in_features = n, k
        self.packed = kernels.vnni_pack_codes(codes.contiguous())
        width = self.packed.shape[0] * 16
        self.d = torch.zeros(k // GROUP, width)
        self.c = torch.zeros(k // GROUP, width)
        self.d[:, :n], self.c[:, :n] = d.t(), c.t()

    @classmethod
    def from_int4(cls, codes: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor) -> "VnniLinear":
        """The int4 storage form (this module's): w = (q - 8) * scale + zero = scale * q + (zero - 8 * scale)."""
        return cls(unpack_codes(codes), scale, zero - 8 * scale)

    @classmethod
    def from_int8(cls, codes: torch.Tensor, scales: torch.Tensor) -> "VnniLinear":
        """Signed 8-bit codes with a scale per 32 (kernels.quantize_int8_groups): w = s * (u - 128), u = q + 128."""
        return cls((codes.to(torch.int16) + 128).to(torch.uint8), scales, -128 * scales)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        from engine.native import kernels
        return kernels.int8_int4_matmul(x, self.packed, self.d, self.c, self.out_features)

    def nbytes(self) -> int:
        return self.packed.numel() + 4 * (self.d.numel() + self.c.numel())
