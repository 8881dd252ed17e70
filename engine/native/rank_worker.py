"""A torchrun rank other than 0 under --tp/--ep: build the shard rank 0 describes, then run its calls until it
says stop. `serve_if_worker` is the one "rank != 0 -> be a worker" switch that the commands, the sweeps and
the benchmarks use."""
from __future__ import annotations

from engine.native.device import DTYPES, resolve_device, set_threads
from engine.native.model_registry import resolve_model
from engine.native.ranks import DIST_TIMEOUT_S, device_for, join_parallel, launched, serve_calls
from engine.native.shard import build_shard, make_runner
from engine.native.tensor_parallel import Hello


def serve_if_worker(device: str | None = None, threads: int | None = None,
                    timeout_s: float = DIST_TIMEOUT_S) -> int | None:
    """On a rank other than 0, serve rank 0's model steps and return the exit code; None on rank 0 (and in a
    process started without torchrun), which goes on to run the engine."""
    if launched().is_main:
        return None
    return run_worker(device, threads, timeout_s)


def run_worker(device: str | None = None, threads: int | None = None, timeout_s: float = DIST_TIMEOUT_S) -> int:
    """Join rank 0's group, build the shard its Hello describes, then serve its calls (ranks.serve_calls)."""
    dev = device_for(resolve_device(device))
    group = join_parallel(launched().world_size, dev, timeout_s)
    hello: Hello | None = group.receive()
    if hello is None:
        group.leave()
        return 0
    set_threads(threads, dev)
    dtype = DTYPES[hello.dtype]
    shard = build_shard(resolve_model(hello.model), dtype, dev, hello.kv_cache_bytes, hello.block_size, group,
                        hello.mode)
    del shard.weights.tensors
    return serve_calls(group, make_runner(shard.model, shard.kv, dev, group, hello.dp_attention))
