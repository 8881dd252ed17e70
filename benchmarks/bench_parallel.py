"""Tensor and expert parallelism on this machine: per-rank resident weights and decode tokens/s for TP 1/2 on a
random Llama and EP 1/2 (and EP 2 with DP attention) on a random DeepSeek-V3-style model, side by side.

    python benchmarks/bench_parallel.py [--batch 4] [--steps 24] [--threads 1] [--device cpu]

Each row is one `torchrun --standalone --nproc-per-node N` launch of this file (gloo on CPU, NCCL on CUDA):
rank 0 runs the engine, prefills `batch` random prompts, then times `steps` decode steps; every rank prints
its resident weight bytes at startup (read back from stderr). On CPU the ranks share the host's cores, so
the figures show that the shards are 1/N and that the ranks stay in step, not a speed-up.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cli import add_numbers  # noqa: E402

RESIDENT = re.compile(r"(tensor|expert) parallel rank (\d+)/\d+: ([\d.]+) MB of weights resident"
                      r"(?:.*routed experts ([\d.]+) MB)?")
# A DeepSeek-V3-style model small enough for a CPU run; 16 routed experts split over 2 ranks.
EP_CONFIG = dict(vocab_size=2048, hidden_size=256, intermediate_size=768, moe_intermediate_size=128,
                 num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4, n_routed_experts=16,
                 num_experts_per_tok=2, n_group=4, topk_group=2, kv_lora_rank=64, q_lora_rank=128,
                 qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=32, num_nextn_predict_layers=0)


def write_models(folder: Path) -> dict[str, Path]:
    from benchmarks.bench_deepseek import BENCH_CONFIG, write_random_checkpoint
    from tests.sweep.tiny_llama import write_tiny_llama
    llama = write_tiny_llama(folder / "llama", hidden=512, ffn=1536, layers=6)
    ds = folder / "deepseek"
    ds.mkdir()
    write_random_checkpoint(ds, {**BENCH_CONFIG, **EP_CONFIG})
    return {"tp": llama, "ep": ds}


def rank_main(args: argparse.Namespace) -> None:
    """One launch: rank 0 times decode steps and writes JSON; the other ranks serve its steps."""
    import torch

    from engine.base import SamplingParams
    from engine.native.llm_engine import LLMEngine
    from engine.native.rank_worker import serve_if_worker
    from engine.native.ranks import launched
    code = serve_if_worker(device=args.device, threads=args.threads)
    if code is not None:
        sys.exit(code)
    world = launched().world_size
    split = {} if world == 1 else {"tp": world} if args.mode == "tp" else {"ep": world, "dp_attention": args.mode == "ep-dpa"}
    engine = LLMEngine(model=args.model, device=args.device, dtype="float32", threads=args.threads,
                       kv_cache_gib=0.05, ignore_eos=True, **split)
    g = torch.Generator().manual_seed(0)
    vocab = engine.model_config.vocab_size
    for _ in range(args.batch):
        engine.add_request(torch.randint(3, vocab, (32,), generator=g).tolist(),
                           SamplingParams(max_tokens=args.steps + 8, temperature=0.0))
    while any(not s.is_decoding for s in engine.scheduler.running) or engine.scheduler.waiting:
        engine.step()  # prefill
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        engine.step()
        times.append(time.perf_counter() - t0)
    engine.close()
    held = sum(p.numel() * p.element_size() for p in engine.model.parameters())
    experts = engine.model.routed_expert_bytes() if hasattr(engine.model, "routed_expert_bytes") else None
    Path(args.out).write_text(json.dumps({"step_s": statistics.median(times[2:]), "rank0_bytes": held,
                                          "rank0_experts": experts}))


def launch(mode: str, n: int, model: Path, args: argparse.Namespace, tmp: Path) -> dict:
    out = tmp / f"{mode}{n}.json"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(n), __file__,
           "--rank-main", "--mode", mode, "--model", str(model), "--out", str(out), "--batch", str(args.batch),
           "--steps", str(args.steps), "--threads", str(args.threads), "--device", args.device]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_CACHE_DIR": str(tmp / "cache"),
           "OMP_NUM_THREADS": str(args.threads)}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{mode} {n} failed:\n{proc.stderr[-3000:]}")
    got = json.loads(out.read_text())
    per_rank = {int(m[2]): (float(m[3]), float(m[4]) if m[4] else None) for m in RESIDENT.finditer(proc.stderr)}
    if not per_rank:  # one rank: no parallel report; rank 0's own count
        experts = got["rank0_experts"]
        per_rank = {0: (got["rank0_bytes"] / 1e6, experts / 1e6 if experts is not None else None)}
    return {**got, "per_rank": per_rank}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_numbers(p, batch=4, steps=24, threads=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--rank-main", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--mode", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rank_main:
        return rank_main(args)
    print(f"device {args.device}, fp32, {args.threads} thread(s) per rank, batch {args.batch}, "
          f"median of {args.steps - 2} decode steps")
    print("modes: tp = --tp, ep = --ep (attention replicated), ep-dpa = --ep --dp-attention")
    print(f"{'mode':<7}{'ranks':>5}  {'weights MB per rank':<24}{'routed experts MB':<20}"
          f"{'decode tok/s':>13}{'tok/s/device':>14}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        models = write_models(tmp)
        for mode, n in (("tp", 1), ("tp", 2), ("ep", 1), ("ep", 2), ("ep-dpa", 2)):
            r = launch(mode, n, models[mode[:2]], args, tmp)
            ranks = [r["per_rank"][k] for k in sorted(r["per_rank"])]
            weights = " / ".join(f"{mb:.1f}" for mb, _ in ranks)
            experts = " / ".join(f"{e:.1f}" for _, e in ranks if e is not None) or "-"
            tps = args.batch / r["step_s"]
            print(f"{mode:<7}{n:>5}  {weights:<24}{experts:<20}{tps:>13.1f}{tps / n:>14.1f}")


if __name__ == "__main__":
    main()
