"""Device and dtype names from configs, checked so an absent device is a clear error."""
from __future__ import annotations

import torch

DTYPES = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
          "float16": torch.float16, "fp16": torch.float16}


def torch_dtype(name: str) -> torch.dtype:
    try:
        return DTYPES[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; valid: {', '.join(DTYPES)}") from None


def check_device(device: str) -> str:
    kind = device.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available here (use a CPU-scale tag: pe-2k, ce-2k or ve-224)")
    if kind == "npu":
        try:
            import torch_npu  # noqa: F401
        except ImportError:
            raise ValueError(f"device {device!r} requested but torch_npu is not installed") from None
    if kind not in ("cpu", "cuda", "npu"):
        raise ValueError(f"unknown device {device!r}; valid: cpu, cuda[:N], npu[:N]")
    return device


def gpus_note(device: str, gpus: int) -> str:
    """What 'per GPU' divides by, in words, for records and chart footnotes."""
    if device.startswith("cpu"):
        return f"per GPU = per device; on CPU the denominator is {gpus} device(s) (the host CPU per rank)"
    return f"per GPU = divided by {gpus} {device.split(':')[0]} device(s) (torchrun processes: dp x tp x ep)"
