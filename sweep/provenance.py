"""Where a sweep number came from: code version, packages, device, dtype, threads, parallel layout."""
from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from records.provenance import git_state, package_versions


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_name(device: str) -> str:
    """A human name for the device the numbers were measured on."""
    if device.startswith("cuda"):
        import torch
        return torch.cuda.get_device_name(torch.device(device))
    if device.startswith("npu"):
        import torch
        return torch.npu.get_device_name()  # type: ignore[attr-defined]
    return cpu_name()


def collect(device: str, dtype: str | None, layout: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The provenance block stored in every record."""
    import torch
    return {
        "git": git_state(),
        "versions": package_versions(),
        "device": device,
        "device_name": device_name(device),
        "dtype": dtype,
        "threads": torch.get_num_threads(),
        "parallel": layout,
        "platform": platform.platform(),
        **(extra or {}),
    }
