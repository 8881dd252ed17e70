"""Tensor and expert parallelism: rank 0 runs the whole engine (scheduler, sampler, outputs) and sends each
step's prepared inputs to the other ranks; every rank runs its shard of the model on them, and the forward's
collectives (all-reduces, logits gather) keep the ranks in step. Ranks other than 0 hold no scheduler state.
Which flag splits a model is its class's PARALLEL_MODE: "tp" (Llama family: heads, FFN, vocab) or "ep"
(DeepSeek-V3, Qwen3-MoE: routed experts); the class's shard_weights says what each rank reads.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from engine.base import EngineError
from engine.native.attention import AttentionMetadata
from engine.native.device import DTYPES, dtype_name, resolve_device, set_threads
from engine.native.kv_cache import KVCache
from engine.native.model_registry import REGISTRY, ResolvedModel, resolve_model
from engine.native.model_runner import ModelRunner
from engine.native.models import model_class
from engine.native.parallel import ParallelGroup, init_parallel, launched_ranks, rank_device
from engine.native.weight_cache import LoadedWeights, cache_folder, load_weights, read_cached


@dataclass
class Hello:
    """What every rank needs to build the same shard layout and the same KV cache as rank 0."""

    model: str
    dtype: str
    kv_cache_bytes: int
    block_size: int
    mode: str = "tp"  # "tp" or "ep": the flag the user launched with (checked against the model class)


@dataclass
class StepMessage:
    input_ids: torch.Tensor
    positions: torch.Tensor
    attn: AttentionMetadata
    zero_blocks: list[int]  # KV blocks rank 0's block manager handed out since the last step


@dataclass
class LogitsMessage:
    rows: list[int]  # hidden rows of the last step whose logits rank 0 samples (every rank joins the gather)


def model_reference(resolved: ResolvedModel) -> str:
    """A registry name travels as itself (each node finds its own install); a path as an absolute path."""
    return resolved.name if resolved.name in REGISTRY else str(resolved.path)


def check_mode(cls, mode: str, architecture: str) -> None:
    """`--tp` splits Llama-family models, `--ep` the experts of MoE models; the other pairings are a clear error."""
    supported = getattr(cls, "PARALLEL_MODE", None)
    if supported != mode:
        other = f"; use --{supported}" if supported else ""
        raise EngineError(f"--{mode} does not apply to {architecture!r} models{other} (--tp: Llama, Qwen2, "
                          f"Qwen3, Mistral; --ep: DeepSeek-V3 and Qwen3-MoE routed experts)")


def load_shard(resolved: ResolvedModel, dtype: torch.dtype, parallel: ParallelGroup,
               mode: str = "tp") -> tuple[LoadedWeights, int]:
    """This rank's weight shard and the whole model's bytes. Rank 0 converts the model into the weight cache
    once; then each rank reads only its rows and columns from the cached safetensors file (memory-mapped).
    Without a cache (read-only home), each rank converts the whole model and keeps its slices."""
    folder = cache_folder(resolved, dtype)
    if parallel.rank == 0 and not (folder / "meta.json").is_file():
        load_weights(resolved, dtype)
    torch.distributed.barrier(group=parallel.control)
    if (folder / "meta.json").is_file():
        from safetensors import safe_open
        weights = read_cached(folder, lambda path: {})
        cls = model_class(weights.config.architecture)
        check_mode(cls, mode, weights.config.architecture)
        with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
            names = list(f.keys())
            weights.tensors = cls.shard_weights(weights.config, f.get_slice, names, parallel.rank, parallel.size)
            full = sum(_nbytes(f.get_slice(n)) for n in names if not _is_int4_part(n))
        return weights, full
    weights = load_weights(resolved, dtype)
    cls = model_class(weights.config.architecture)
    check_mode(cls, mode, weights.config.architecture)
    full = sum(t.numel() * t.element_size() for n, t in weights.tensors.items() if not _is_int4_part(n))
    weights.tensors = cls.shard_weights(weights.config, weights.tensors.__getitem__, list(weights.tensors),
                                        parallel.rank, parallel.size)
    return weights, full


def _is_int4_part(name: str) -> bool:
    from engine.native.int4_weights import SUFFIXES
    return name.endswith(SUFFIXES)


def _nbytes(lazy) -> int:
    n = 1
    for s in lazy.get_shape():
        n *= s
    return n * {"F32": 4, "BF16": 2, "F16": 2}.get(lazy.get_dtype(), 4)


def report_memory(model: torch.nn.Module, parallel: ParallelGroup, full_bytes: int) -> int:
    """Print (stderr) and return the bytes of weights this rank holds (and of its routed experts, under EP)."""
    held = sum(p.numel() * p.element_size() for p in model.parameters())
    mode = "expert" if getattr(model, "PARALLEL_MODE", "tp") == "ep" else "tensor"
    experts = (f"; routed experts {model.routed_expert_bytes() / 1e6:.1f} MB"
               if hasattr(model, "routed_expert_bytes") else "")
    print(f"{mode} parallel rank {parallel.rank}/{parallel.size}: {held / 1e6:.1f} MB of weights resident "
          f"({held / max(full_bytes, 1):.2f} of the whole model's {full_bytes / 1e6:.1f} MB{experts})",
          file=sys.stderr)
    return held


class TPModelRunner(ModelRunner):
    """Rank 0's runner: sends each step's inputs to the other ranks, then runs its own shard on them."""

    def __init__(self, model, kv_cache: KVCache, device: torch.device, parallel: ParallelGroup):
        super().__init__(model, kv_cache, device)
        self.parallel = parallel
        self.closed = False
        kv_cache.track_zeroes_for_peers()  # the MTP drafter zeroes blocks between forwards

    def forward(self, input_ids, positions, attn):
        with _peer_failures():
            self.parallel.send(StepMessage(input_ids, positions, attn, self.kv.take_zeroes_for_peers()))
            return super().forward(input_ids, positions, attn)

    def logits(self, hidden, rows):
        if not self.model.LOGITS_NEED_PEERS:  # a replicated head (expert parallelism): no message, no gather
            return super().logits(hidden, rows)
        with _peer_failures():
            self.parallel.send(LogitsMessage(rows))
            return super().logits(hidden, rows)

    def close(self) -> None:
        """Tell the other ranks to leave their loop (idempotent)."""
        if not self.closed:
            self.closed = True
            try:
                self.parallel.send(None)
                self.parallel.leave()
            except RuntimeError:
                pass  # a peer is already gone: the step that found out has reported it


@contextmanager
def _peer_failures():
    try:
        yield
    except RuntimeError as exc:  # gloo/NCCL: a peer died, or a collective passed --dist-timeout
        raise EngineError(f"tensor parallel rank 0: a step failed ({type(exc).__name__}: {exc}); "
                          f"another rank may have died") from exc


def run_worker(device: str | None = None, threads: int | None = None, timeout_s: float = 300.0) -> int:
    """A rank other than 0: build the shard rank 0 describes, then run every step it sends until it says stop."""
    rank, world = launched_ranks()
    dev = rank_device(resolve_device(device))
    parallel = init_parallel(world, dev, timeout_s)
    hello = _next_step(parallel)
    if hello is None:
        return 0
    set_threads(threads, dev)
    dtype = DTYPES[hello.dtype]
    weights, full = load_shard(resolve_model(hello.model), dtype, parallel, hello.mode)
    cls = model_class(weights.config.architecture)
    model = cls.from_weights(weights.config, weights.tensors, dtype, dev, parallel=parallel)
    del weights.tensors
    report_memory(model, parallel, full)
    kv = KVCache(cls.kv_cache_spec(model.config), hello.kv_cache_bytes, hello.block_size, dtype, dev)
    model.bind_kv_cache(kv.caches)
    runner = ModelRunner(model, kv, dev)
    from engine.native.dp_attention import DPStepMessage, run_part  # it builds on this module
    hidden = None
    while (msg := _next_step(parallel)) is not None:
        try:
            if isinstance(msg, LogitsMessage):
                runner.logits(hidden, msg.rows)
            elif isinstance(msg, DPStepMessage):  # DP attention: this rank's slice of the batch
                kv.zero_blocks(msg.zero_blocks)
                hidden = run_part(runner, parallel, msg.parts)
            else:
                kv.zero_blocks(msg.zero_blocks)
                hidden = runner.forward(msg.input_ids, msg.positions, msg.attn)
        except Exception as exc:  # a collective timed out or a peer died mid-step
            raise EngineError(f"tensor parallel rank {parallel.rank}: a step failed ({type(exc).__name__}: "
                              f"{exc}); another rank may have died") from exc
    parallel.leave()
    return 0


def _next_step(parallel: ParallelGroup) -> StepMessage | None:
    try:
        return parallel.receive()
    except Exception as exc:  # rank 0 exited or was killed: its sockets closed
        raise EngineError(f"tensor parallel rank {parallel.rank}: lost rank 0 ({type(exc).__name__}: {exc}); "
                          f"stopping") from exc


def hello_for(resolved: ResolvedModel, dtype: torch.dtype, kv_cache_bytes: int, block_size: int,
              mode: str = "tp") -> Hello:
    return Hello(model=model_reference(resolved), dtype=dtype_name(dtype), kv_cache_bytes=kv_cache_bytes,
                 block_size=block_size, mode=mode)
