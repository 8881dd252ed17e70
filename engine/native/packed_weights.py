"""bf16 matrices packed once into oneDNN's blocked layout, for steps of more rows than the int4 path serves.

torch's F.linear hands oneDNN the plain [N, K] bf16 weight on every call, and oneDNN lays it out again each time
into the blocked (VNNI pair-interleaved) form its bf16 kernels read: at decode-sized steps that copy costs as
much as the multiply. Packing at load time (torch.ops.mkldnn._reorder_linear_weight, the form torch's own
compiler freezes weights into) leaves only the multiply. Measured on the 2-core development machine (Xeon with
AMX, 1 thread, A/B interleaved, load average ~9): 64 x 576 x 3072 1.3-1.8x faster, 64 x 1536 x 576 2.3x, the
64-row logits head 1.2-1.3x, 2,048-row prefill 1.0-1.1x; with oneDNN capped below AMX
(ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16) 1.04-1.45x. Same bf16 inputs, f32 accumulation and bf16 output as
F.linear; only the order of the sums inside oneDNN may differ.

HARNESS_PACKED_BF16=0 turns it off (F.linear on the plain weights runs instead); set_enabled() switches it per
process (benchmarks compare both paths in one run).
"""
from __future__ import annotations

import os

import torch

ROWS_HINT = 64  # the row count oneDNN picks its blocking for; any row count computes correctly
_enabled = os.environ.get("HARNESS_PACKED_BF16", "1") != "0"


def available(dtype: torch.dtype, device: torch.device) -> bool:
    """bf16 on a CPU whose torch build has oneDNN with bf16 support (fp32 keeps F.linear: it must stay bitwise)."""
    return (dtype == torch.bfloat16 and device.type == "cpu" and torch.backends.mkldnn.is_available()
            and hasattr(torch.ops.mkldnn, "_reorder_linear_weight") and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def onednn_uses_amx() -> bool:
    """Whether oneDNN's bf16 matmuls run on AMX tiles here: the CPU has them and ONEDNN_MAX_CPU_ISA does not cap
    oneDNN below them (that cap emulates an AVX-512 BF16 CPU without AMX, such as AMD EPYC)."""
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper()
    return "amx_bf16" in flags and (not cap or "AMX" in cap or cap in ("ALL", "DEFAULT"))


def enabled() -> bool:
    return _enabled


def set_enabled(on: bool) -> None:
    global _enabled
    _enabled = on


class PackedLinear:
    """y = x @ W.T (+ bias) with W [N, K] bf16 packed once; x bf16 [rows, K] on the CPU."""

    def __init__(self, weight: torch.Tensor):
        self.out_features, self.in_features = weight.shape
        with torch.no_grad():
            self.packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), ROWS_HINT)

    def __call__(self, x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, bias, "none", [None], "")
