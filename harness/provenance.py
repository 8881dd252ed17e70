"""Where a result came from: git state and package versions."""
from __future__ import annotations

import platform
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import harness

PACKAGES = ("torch", "transformers", "openai", "httpx", "sympy", "numpy", "datasets", "gguf", "tokenizers")
REPO_ROOT = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def git_state() -> dict[str, Any]:
    """Commit and dirty flag of the harness source tree (None when not a git checkout)."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return {"commit": None, "dirty": None}
        status = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10,
        )
        return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"harness": harness.__version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def provenance() -> dict[str, Any]:
    return {"git": git_state(), "versions": package_versions(), "platform": platform.platform()}
