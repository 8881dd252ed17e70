"""Where a written result came from: git state, package versions, platform, and file hashes (one of each)."""
from __future__ import annotations

import hashlib
import platform
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
# Run records and sweep records list the same packages, so their versions compare across the two.
PACKAGES = ("torch", "transformers", "openai", "httpx", "sympy", "numpy", "datasets", "gguf", "tokenizers",
            "matplotlib", "safetensors")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks (datasets, model files)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=1)
def git_state(repo: Path = REPO_ROOT) -> dict[str, Any]:
    """Commit and dirty flag of the source tree; None values when git or the repository is absent."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"harness": _version("harness"), "python": platform.python_version()}
    versions.update((name, _version(name)) for name in PACKAGES)
    return versions


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def provenance() -> dict[str, Any]:
    """The provenance block of run.json and summary.json."""
    return {"git": git_state(), "versions": package_versions(), "platform": platform.platform()}
