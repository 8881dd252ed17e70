"""Long generations beyond the KV budget: what recompute preemption costs, side by side with a cache that holds
every sequence (same engine, same prompts, greedy, ignore_eos so every sequence writes --tokens tokens).

    python benchmarks/bench_preemption.py [--seqs 8] [--tokens 256] [--fraction 0.35] [--dtype bfloat16] [--threads 2]

Prints the CPU, the KV bytes per token, output tokens/s of each run, the tight/roomy time ratio, the number
of preemptions and of generated tokens recomputed, and whether the greedy tokens agree.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.base import SamplingParams  # noqa: E402
from engine.native import LLM  # noqa: E402
from engine.native.model_registry import DEFAULT_MODEL  # noqa: E402
from sweep.provenance import cpu_name  # noqa: E402

TOPICS = ["bicycles", "lighthouses", "the water cycle", "volcanoes", "printing presses", "vaccines", "glaciers", "bees"]


def run(a: argparse.Namespace, kv_tokens: int, prompts: list[list[int]], bytes_per_token: int) -> tuple[float, dict, list]:
    llm = LLM(model=DEFAULT_MODEL, device="cpu", dtype=a.dtype, threads=a.threads, ignore_eos=True,
              kv_cache_gib=(kv_tokens + a.block) * bytes_per_token / (1 << 30), block_size=a.block)
    params = SamplingParams(max_tokens=a.tokens, temperature=0.0)
    llm.generate([prompts[0]], SamplingParams(max_tokens=4, temperature=0.0))  # warm-up
    t0 = time.perf_counter()
    outs = llm.generate(prompts, params)
    return time.perf_counter() - t0, llm.engine.stats(), [o.token_ids for o in outs]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqs", type=int, default=8)
    p.add_argument("--tokens", type=int, default=256, help="output tokens per sequence")
    p.add_argument("--fraction", type=float, default=0.35, help="tight KV cache as a fraction of what all need")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--block", type=int, default=16)
    a = p.parse_args()
    probe = LLM(model=DEFAULT_MODEL, device="cpu", dtype=a.dtype, threads=a.threads, kv_cache_gib=0.01)
    bytes_per_token = probe.engine.kv_bytes_per_token
    tk = probe.tokenizer
    prompts = [tk.encode(tk.render_chat([{"role": "user", "content": f"Write a long essay about {t}."}]))
               for t in (TOPICS * (a.seqs // len(TOPICS) + 1))[:a.seqs]]
    del probe
    need = sum(len(x) + a.tokens for x in prompts)
    tight_tokens = int(need * a.fraction) // a.block * a.block
    print(f"CPU: {cpu_name()}, {a.threads} threads, {a.dtype}; KV {bytes_per_token} bytes/token; "
          f"{a.seqs} sequences x {a.tokens} output tokens need {need} KV tokens; tight cache {tight_tokens}", flush=True)
    roomy_s, roomy, ref = run(a, need + a.block * a.seqs, prompts, bytes_per_token)
    tight_s, tight, ours = run(a, tight_tokens, prompts, bytes_per_token)
    out_tokens = a.seqs * a.tokens
    print(f"roomy cache: {roomy_s:.1f} s, {out_tokens / roomy_s:.1f} output tok/s, {roomy['preemptions']} preemptions")
    print(f"tight cache: {tight_s:.1f} s, {out_tokens / tight_s:.1f} output tok/s, {tight['preemptions']} preemptions, "
          f"{tight['recomputed_tokens']} generated tokens recomputed")
    print(f"tight / roomy time: {tight_s / roomy_s:.2f}x; same greedy tokens: {ours == ref}")


if __name__ == "__main__":
    main()
