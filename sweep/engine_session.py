"""Shared by the prefill and decode sweeps: build the built-in engine from a tag, make prompts, drain it."""
from __future__ import annotations

from typing import Any

import torch

from sweep.config import SweepConfig

ENGINE_KEYS = {"kv_cache_gib", "block_size", "max_num_seqs", "max_num_batched_tokens", "max_model_len",
               "enable_prefix_caching", "max_prefill_chunk", "int4", "kv_cache_dtype"}
# Workload keys that live in [engine] but shape the sweep's prompts, not the engine.
SWEEP_KEYS = {"decode_fill", "cached_prefix"}


def build_engine(cfg: SweepConfig, device: str, engine_cls: Any = None, **overrides: Any):
    """An LLMEngine (or engine_cls) for the tag's model, device, dtype and [engine] options (overrides win)."""
    if engine_cls is None:
        from engine.native.llm_engine import LLMEngine as engine_cls

    options = _engine_keys(cfg)
    if cfg.model_parallel > 1:  # rank 0 of a tp/ep launch: the engine spans every process
        options.update(tp=cfg.tp, ep=cfg.ep, dp_attention=cfg.dp_attention)
    options.update(overrides)
    return engine_cls(model=cfg.model, device=device, dtype=cfg.dtype, threads=cfg.threads, **options)


def _engine_keys(cfg: SweepConfig) -> dict[str, Any]:
    options = {k: v for k, v in cfg.engine.items() if k not in SWEEP_KEYS}
    unknown = sorted(set(options) - ENGINE_KEYS)
    if unknown:
        raise ValueError(f"{cfg.path}: unknown [engine] key(s) {', '.join(unknown)}; valid: {', '.join(sorted(ENGINE_KEYS))}")
    return options


def engine_options(cfg: SweepConfig, device: str):
    """EngineOptions that build the harness's native engine exactly as build_engine builds the sweep's."""
    from engine import EngineOptions
    from engine.native.model_registry import DEFAULT_MODEL

    return EngineOptions(model=cfg.model or DEFAULT_MODEL, device=device, dtype=cfg.dtype, threads=cfg.threads,
                         nextn=cfg.nextn or 0, **_engine_keys(cfg))


class PromptMaker:
    """Random token prompts; every call draws new tokens so one point never hits another's prefix cache."""

    def __init__(self, vocab_size: int, seed: int) -> None:
        self.vocab = vocab_size
        self.gen = torch.Generator().manual_seed(seed)

    def tokens(self, n: int) -> list[int]:
        # Skip the low ids, where byte-level vocabularies keep special and control tokens.
        return torch.randint(min(1000, self.vocab // 2), self.vocab, (n,), generator=self.gen).tolist()


def drain(engine) -> None:
    """Abort everything still queued or running so the next point starts with an empty cache."""
    engine.abort_all()
    while engine.has_unfinished():
        engine.step()


def describe(engine) -> dict[str, Any]:
    d = engine.describe()
    return {"model": d.get("model"), "engine": d}
