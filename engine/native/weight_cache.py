"""Converted-form cache: dequantised tensors in safetensors plus config and tokenizer, so reloads are fast."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch

from engine.native import int4_weights
from engine.native.config import ModelConfig
from engine.native.model_registry import ResolvedModel, sha256_file

CACHE_VERSION = 4  # 3: 4-bit parts of GGUF matrices (int4_weights); 4: q/k norms, sliding window, Qwen MoE


def cache_root() -> Path:
    return Path(os.environ.get("HARNESS_CACHE_DIR") or Path.home() / ".cache" / "harness") / "native"


def _source_stamps(path: Path) -> str:
    """Name, size and mtime of every file the conversion may read: a GGUF file, or each file of an HF folder
    (weights, index, config, tokenizer, generation config), so replacing any of them makes a new entry."""
    files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.is_file())
    return ";".join(f"{p.name}:{st.st_size}:{st.st_mtime_ns}" for p in files for st in [p.stat()])


def _key(model: ResolvedModel, dtype: torch.dtype) -> str:
    # Keyed by path, sizes and mtimes (not content) so a cache hit never rereads the source files.
    raw = f"{CACHE_VERSION}|{model.path}|{_source_stamps(model.path)}|{dtype}"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


@dataclasses.dataclass
class LoadedWeights:
    config: ModelConfig
    tensors: dict[str, torch.Tensor]
    tokenizer_json: str  # a `tokenizers` JSON document
    chat_template: str | None
    special_tokens: dict  # bos/eos token strings for the template
    sha256: str | None
    from_cache: bool


def cache_folder(model: ResolvedModel, dtype: torch.dtype) -> Path:
    """Where the converted form of `model` in `dtype` lives (it may not exist yet)."""
    return cache_root() / _key(model, dtype)


def read_cached(folder: Path, read_tensors) -> LoadedWeights:
    """A cache entry's config and tokenizer, with tensors from read_tensors(safetensors path)."""
    meta = json.loads((folder / "meta.json").read_text())
    return LoadedWeights(config=ModelConfig(**{**meta["config"], "eos_token_ids": tuple(meta["config"]["eos_token_ids"])}),
                         tensors=read_tensors(folder / "model.safetensors"),
                         tokenizer_json=(folder / "tokenizer.json").read_text(),
                         chat_template=meta["chat_template"], special_tokens=meta["special_tokens"],
                         sha256=meta["sha256"], from_cache=True)


def load_weights(model: ResolvedModel, dtype: torch.dtype) -> LoadedWeights:
    """Return weights in `dtype`, from the cache when present, else converted and cached."""
    from safetensors.torch import load_file, save_file
    folder = cache_folder(model, dtype)
    if (folder / "meta.json").is_file():
        try:
            return read_cached(folder, lambda path: load_file(str(path)))
        except (OSError, ValueError, KeyError, TypeError):
            shutil.rmtree(folder, ignore_errors=True)  # a torn or stale cache entry is rebuilt
    loaded = _convert(model, dtype)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-"))
    try:
        save_file({k: v.contiguous() for k, v in loaded.tensors.items()}, str(tmp / "model.safetensors"))
        (tmp / "tokenizer.json").write_text(loaded.tokenizer_json)
        meta = {"config": dataclasses.asdict(loaded.config), "chat_template": loaded.chat_template,
                "special_tokens": loaded.special_tokens, "sha256": loaded.sha256, "source": str(model.path)}
        (tmp / "meta.json").write_text(json.dumps(meta))
        os.replace(tmp, folder) if not folder.exists() else shutil.rmtree(tmp)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # caching is an optimisation; a read-only home still works
    return loaded


def _convert(model: ResolvedModel, dtype: torch.dtype) -> LoadedWeights:
    from engine.base import EngineError
    from engine.native import tokenizer as tok
    sha = sha256_file(model.path) if model.kind == "gguf" else None
    if model.sha256 and sha != model.sha256:
        raise EngineError(f"{model.path}: sha256 {sha} does not match the expected {model.sha256}")
    if model.kind == "gguf":
        from engine.native.gguf_weights import read_gguf
        contents = read_gguf(model.path)
        tk_json, template, special = tok.from_gguf_metadata(contents.tokenizer)
        config, tensors = contents.config, contents.tensors
    else:
        from engine.native.hf_weights import read_hf_config, read_hf_tensors
        config = read_hf_config(model.path)
        tensors = read_hf_tensors(model.path)
        tk_json, template, special = tok.from_hf_folder(model.path)
    from engine.native.models import model_class
    cls = model_class(config.architecture)
    tensors = cls.convert_weights(config, tensors)
    keep_fp32 = tuple(getattr(cls, "FP32_WEIGHTS", ()))  # e.g. MoE router weights, kept fp32 as in HF
    tensors = {k: v if k.endswith(int4_weights.SUFFIXES) else v.float() if keep_fp32 and k.endswith(keep_fp32)
               else v.to(dtype) for k, v in tensors.items()}
    return LoadedWeights(config=config, tensors=tensors, tokenizer_json=tk_json, chat_template=template,
                         special_tokens=special, sha256=sha, from_cache=False)
