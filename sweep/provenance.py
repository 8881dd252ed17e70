"""Where a sweep number came from: code version, packages, device, dtype, threads, parallel layout."""
from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parent.parent
_PACKAGES = ("torch", "numpy", "httpx", "openai", "matplotlib", "safetensors")


def git_state(repo: Path = _REPO) -> dict[str, Any]:
    """Commit and dirty flag; None values when git or the repository is absent (an installed copy)."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


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
