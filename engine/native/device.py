"""Device and dtype resolution: explicit choices fail loudly, never fall back silently."""
from __future__ import annotations

import importlib.util

import torch

from engine.base import EngineError
from engine.native.device_names import DEVICE_KINDS, DTYPE_NAMES

DTYPES = {name: getattr(torch, attr) for name, attr in DTYPE_NAMES.items()}


def _npu_available() -> bool:
    if importlib.util.find_spec("torch_npu") is None:
        return False
    import torch_npu  # noqa: F401  (registers torch.npu)
    return bool(torch.npu.is_available())


def resolve_device(name: str | None) -> torch.device:
    """Return the requested device, or detect cuda > npu > cpu when none is asked for."""
    if name in (None, "", "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _npu_available():
            return torch.device("npu")
        return torch.device("cpu")
    kind = name.split(":")[0]
    if kind == "cpu":
        return torch.device("cpu")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise EngineError(f"device {name!r} requested but this torch build ({torch.__version__}) sees no CUDA GPU")
        return torch.device(name)
    if kind == "npu":
        if importlib.util.find_spec("torch_npu") is None:
            raise EngineError("device 'npu' requested but torch_npu is not installed (pip install torch_npu "
                              "matching your torch and CANN versions)")
        if not _npu_available():
            raise EngineError("device 'npu' requested but torch_npu sees no Ascend NPU")
        return torch.device(name)
    raise EngineError(f"unknown device {name!r}; valid devices: {', '.join(DEVICE_KINDS)} (or leave unset to detect)")


def resolve_dtype(name: str | None, device: torch.device) -> torch.dtype:
    """bf16 by default where the device computes it natively; fp32 otherwise or when asked."""
    if name in (None, "", "auto"):
        if device.type == "cpu":
            return torch.bfloat16 if torch.backends.cpu.get_cpu_capability() in ("AVX512", "AMX") else torch.float32
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.bfloat16
    if name not in DTYPES:
        raise EngineError(f"unknown dtype {name!r}; valid dtypes: bf16, fp16, fp32")
    return DTYPES[name]


def dtype_name(dtype: torch.dtype) -> str:
    return {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}[dtype]


def set_threads(threads: int | None, device: torch.device) -> int:
    """Apply the CPU thread count (intra-op); returns the count in effect."""
    if threads is not None:
        if threads < 1:
            raise EngineError(f"threads must be >= 1, got {threads}")
        torch.set_num_threads(threads)
    return torch.get_num_threads()
