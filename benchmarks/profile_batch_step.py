"""Wall time and op profile of the engine's batched decode step at steady state (the batch path's step).

    python benchmarks/profile_batch_step.py [--threads 2] [--requests 64] [--prompt-len 128] [--warm-steps 120]
                                            [--profile]

Starts --requests requests of random --prompt-len-token prompts, runs --warm-steps decode steps (the context
grows to about prompt + warm steps), then times 20 decode steps (median and min) and, with --profile, prints
torch.profiler's op table over 5 more.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_native import cpu_line, prompts  # noqa: E402
from engine.base import SamplingParams  # noqa: E402
from engine.native.llm_engine import LLMEngine  # noqa: E402
from engine.native.model_registry import DEFAULT_MODEL  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--warm-steps", type=int, default=120)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "int8"])
    a = ap.parse_args()
    eng = LLMEngine(DEFAULT_MODEL, device="cpu", dtype="bf16", threads=a.threads, kv_cache_gib=1.0, ignore_eos=True,
                    kv_cache_dtype=a.kv_cache_dtype)
    for i, p in enumerate(prompts(a.requests, a.prompt_len, seed=0)):
        eng.add_request(p, SamplingParams(max_tokens=a.warm_steps + 64), f"r{i}")
    done = 0
    while done < a.warm_steps:
        done += eng.step().stats.num_prefill_tokens == 0
    times = []
    for _ in range(20):
        t = time.perf_counter()
        eng.step()
        times.append(time.perf_counter() - t)
    print(f"# {cpu_line()}")
    print(f"threads {a.threads}, {a.requests} rows at ~{a.prompt_len + a.warm_steps} tokens of context: decode step "
          f"median {1000 * statistics.median(times):.1f} ms, min {1000 * min(times):.1f} ms")
    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(5):
                eng.step()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
