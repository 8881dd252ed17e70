"""What one rank builds: its model (the whole model, or its --tp/--ep shard), the KV cache bound to it, and the
runner that steps them. The engine's rank 0 and every worker rank build through here.

Which flag splits a model is its class's PARALLEL_MODE: "tp" (Llama family: heads, FFN, vocab) or "ep"
(DeepSeek-V3, Qwen3-MoE: routed experts); the class's shard_weights says what each rank reads.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import torch

from engine.base import EngineError
from engine.native.dp_attention import DPAttentionRunner
from engine.native.kv_cache import KVCache
from engine.native.kv_quant import resolve_kv_dtype
from engine.native.model_registry import ResolvedModel
from engine.native.model_runner import ModelRunner
from engine.native.models import model_class
from engine.native.ranks import ParallelGroup
from engine.native.tensor_parallel import ParallelRunner
from engine.native.weight_cache import LoadedWeights, cache_folder, load_weights, read_cached


@dataclass
class Shard:
    weights: LoadedWeights  # config, tokenizer, sha256; `tensors` still held until the caller drops them
    model: torch.nn.Module
    kv: KVCache


def build_shard(resolved: ResolvedModel, dtype: torch.dtype, device: torch.device, kv_cache_bytes: int,
                block_size: int, group: ParallelGroup | None = None, mode: str = "tp",
                kv_cache_dtype: str | None = None) -> Shard:
    """The model (this rank's shard when `group` is given) and a KV cache of `kv_cache_bytes` bound to it, in the
    model's dtype or, with kv_cache_dtype "int8", as 8-bit rows (kv_quant.py)."""
    if group is None:
        weights = load_weights(resolved, dtype)
        model = model_class(weights.config.architecture).from_weights(weights.config, weights.tensors, dtype, device)
    else:
        weights, full_bytes = load_shard(resolved, dtype, group, mode)
        model = model_class(weights.config.architecture).from_weights(weights.config, weights.tensors, dtype,
                                                                      device, parallel=group)
        report_memory(model, group, full_bytes)
    # A tensor-parallel shard caches only its own KV heads (an expert-parallel rank caches them all).
    kv_config = model.config if group is not None else weights.config
    spec, kv_dtype = type(model).kv_cache_spec(kv_config), resolve_kv_dtype(kv_cache_dtype, dtype)
    if kv_dtype == torch.int8:
        spec = spec.int8_rows()
    kv = KVCache(spec, kv_cache_bytes, block_size, kv_dtype, device)
    model.bind_kv_cache(kv.caches)
    return Shard(weights, model, kv)


def make_runner(model, kv: KVCache, device: torch.device, group: ParallelGroup | None = None,
                dp_attention: bool = False) -> ModelRunner:
    """One rank's runner: plain on one rank; under --tp/--ep rank 0 drives the others (ParallelRunner);
    DP attention splits each step's batch by owning rank."""
    if group is None:
        return ModelRunner(model, kv, device)
    return (DPAttentionRunner if dp_attention else ParallelRunner)(model, kv, device, group)


def check_mode(cls, mode: str, architecture: str) -> None:
    """`--tp` splits Llama-family models, `--ep` the experts of MoE models; the other pairings are a clear error."""
    supported = getattr(cls, "PARALLEL_MODE", None)
    if supported != mode:
        other = f"; use --{supported}" if supported else ""
        raise EngineError(f"--{mode} does not apply to {architecture!r} models{other} (--tp: Llama, Qwen2, "
                          f"Qwen3, Mistral; --ep: DeepSeek-V3 and Qwen3-MoE routed experts)")


def load_shard(resolved: ResolvedModel, dtype: torch.dtype, group: ParallelGroup,
               mode: str = "tp") -> tuple[LoadedWeights, int]:
    """This rank's weight shard and the whole model's bytes. Rank 0 converts the model into the weight cache
    once; then each rank reads only its rows and columns from the cached safetensors file (memory-mapped).
    Without a cache (read-only home), each rank converts the whole model and keeps its slices."""
    folder = cache_folder(resolved, dtype)
    if group.rank == 0 and not (folder / "meta.json").is_file():
        load_weights(resolved, dtype)
    group.barrier()
    if (folder / "meta.json").is_file():
        from safetensors import safe_open
        weights = read_cached(folder, lambda path: {})
        cls = model_class(weights.config.architecture)
        check_mode(cls, mode, weights.config.architecture)
        with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
            names = list(f.keys())
            weights.tensors = cls.shard_weights(weights.config, f.get_slice, names, group.rank, group.size)
            full = sum(_nbytes(f.get_slice(n)) for n in names if not _is_int4_part(n))
        return weights, full
    weights = load_weights(resolved, dtype)
    cls = model_class(weights.config.architecture)
    check_mode(cls, mode, weights.config.architecture)
    full = sum(t.numel() * t.element_size() for n, t in weights.tensors.items() if not _is_int4_part(n))
    weights.tensors = cls.shard_weights(weights.config, weights.tensors.__getitem__, list(weights.tensors),
                                        group.rank, group.size)
    return weights, full


def _is_int4_part(name: str) -> bool:
    from engine.native.int4_weights import SUFFIXES
    return name.endswith(SUFFIXES)


def _nbytes(lazy) -> int:
    n = 1
    for s in lazy.get_shape():
        n *= s
    return n * {"F32": 4, "BF16": 2, "F16": 2}.get(lazy.get_dtype(), 4)


def report_memory(model: torch.nn.Module, group: ParallelGroup, full_bytes: int) -> int:
    """Print (stderr) and return the bytes of weights this rank holds (and of its routed experts, under EP)."""
    held = sum(p.numel() * p.element_size() for p in model.parameters())
    mode = "expert" if getattr(model, "PARALLEL_MODE", "tp") == "ep" else "tensor"
    experts = (f"; routed experts {model.routed_expert_bytes() / 1e6:.1f} MB"
               if hasattr(model, "routed_expert_bytes") else "")
    print(f"{mode} parallel rank {group.rank}/{group.size}: {held / 1e6:.1f} MB of weights resident "
          f"({held / max(full_bytes, 1):.2f} of the whole model's {full_bytes / 1e6:.1f} MB{experts})",
          file=sys.stderr)
    return held
