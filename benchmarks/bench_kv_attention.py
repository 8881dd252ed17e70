"""Paged decode attention over a bf16 cache against the same cache in 8-bit rows (kv_cache_dtype int8), alone.

    python benchmarks/bench_kv_attention.py [--threads 2] [--rows 64] [--context 248] [--calls 30] [--repeats 3]
                                       [--block-size 16]

SmolLM2-135M's attention shape (9 query heads, 3 KV heads of 64); each row's blocks are dealt at random over a cache
20x the size the rows need, as a long-running engine scatters them. Prints ms per call (one layer) for each form,
taking turns, and the ratio of the medians.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.native import kernels  # noqa: E402
from engine.native.kv_quant import quantize_rows  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--context", type=int, default=248)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--block-size", type=int, default=16, help="tokens per cache block (the engine's default: 16)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if not kernels.load():
        print("no compiled kernels (a C++ compiler is needed)")
        return 1
    g = torch.Generator().manual_seed(0)
    block = a.block_size
    per_row = (a.context + block - 1) // block
    num_blocks = a.rows * per_row * 20 + 1
    cache = torch.randn(6, num_blocks * block, 64, generator=g).bfloat16()
    cache[:, :block] = 0
    perm = (torch.randperm(num_blocks - 1, generator=g) + 1)[: a.rows * per_row]
    tables = perm.view(a.rows, per_row)
    lens = torch.full((a.rows,), a.context)
    q = torch.randn(a.rows, 9, 64, generator=g).bfloat16()
    forms = {"bf16": cache, "int8": quantize_rows(cache)}
    print(f"cache {cache.numel() * 2 / 1e6:.0f} MB bf16, {forms['int8'].numel() / 1e6:.0f} MB int8; {a.rows} rows x "
          f"{a.context} tokens, {a.threads} threads")
    times: dict[str, list[float]] = {name: [] for name in forms}
    for _ in range(a.repeats):
        for name, kv in forms.items():
            t = time.perf_counter()
            for _ in range(a.calls):
                kernels.paged_decode_attention(q, kv, tables, lens, block, 0.125)
            times[name].append((time.perf_counter() - t) / a.calls * 1e3)
    for name, ts in times.items():
        print(f"{name}: " + ", ".join(f"{t:.3f}" for t in ts) + " ms per call")
    print(f"bf16 / int8 (medians): {statistics.median(times['bf16']) / statistics.median(times['int8']):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
