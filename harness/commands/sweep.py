"""`python -m harness sweep prefill|decode|encoder|serve TAG`: Pareto sweeps and a serving sweep."""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict
from pathlib import Path

HELP = "performance sweeps: prefill, decode, encoder (built-in engine) and serve (any OpenAI-compatible server)"
EXAMPLES = """\
  python -m harness sweep encoder ve-224
  python -m harness sweep prefill pe-2k --points 256,512
  python -m harness sweep decode ce-2k --context 512 --price-per-gpu-hour 2.5
  python -m harness sweep serve serve-local --base-url http://127.0.0.1:8000/v1
  python -m harness sweep decode ce-2k --plot-only --compare other/sweeps/ce-2k/results.jsonl
  PROFILE=1 python -m harness sweep encoder ve-224      (writes traces; records marked profiled)
  bash sweep/run_sweep.sh decode ce-128k 131072 3 0.75
"""
MODES = ("prefill", "decode", "encoder", "serve")


def _points(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--points wants comma-separated integers, got {text!r}") from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError("--points wants positive integers")
    return values


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("mode", choices=MODES, help="sweep kind")
    p.add_argument("tag", help="config tag in sweep/configs/<tag>.toml, or a path to a .toml file")
    p.add_argument("--context", type=int, help="prefill: context tokens; decode: KV length per request")
    p.add_argument("--nextn", type=int, help="decode: speculative draft tokens per step (0 = off)")
    p.add_argument("--accept", type=float, help="decode: synthetic per-position acceptance probability p")
    p.add_argument("--points", type=_points, help="comma-separated point list overriding the config")
    p.add_argument("--warmup-steps", type=int, help="override the config's warm-up steps (serve: requests)")
    p.add_argument("--measured-steps", type=int, help="override the config's measured steps")
    p.add_argument("--out-dir", default="sweeps", help="results root; files go to OUT_DIR/<tag>/ (default: sweeps)")
    p.add_argument("--compare", nargs="+", metavar="FILE", default=[],
                   help="other results.jsonl files (or folders) overlaid on one chart (compare.png)")
    p.add_argument("--plot-only", action="store_true", help="redraw the chart(s) from existing results")
    p.add_argument("--base-url", help="serve: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--served-model", help="serve: model name sent in requests")
    cost = p.add_argument_group("cost per million tokens")
    cost.add_argument("--price-per-gpu-hour", type=float, default=0.0, help="$ per GPU-hour")
    cost.add_argument("--utilization", type=float, default=1.0, help="fraction of time the GPU does this work")
    cost.add_argument("--power-kw", type=float, default=0.0, help="average power per GPU (kW)")
    cost.add_argument("--pue", type=float, default=1.0, help="data-centre power usage effectiveness")
    cost.add_argument("--price-per-kwh", type=float, default=0.0, help="electricity price ($/kWh)")
    p.add_argument("--profile", action="store_true",
                   help="write torch profiler traces and mark records profiled (also PROFILE=1)")


def _make_impl(mode: str, cfg, device: str):
    if mode == "encoder":
        from sweep.encoder import EncoderSweep
        return EncoderSweep(cfg, device)
    if mode == "prefill":
        from sweep.prefill import PrefillSweep
        return PrefillSweep(cfg, device)
    if mode == "decode":
        from sweep.decode import DecodeSweep
        return DecodeSweep(cfg, device)
    from sweep.serve import ServeSweep
    return ServeSweep(cfg)


def run(args: argparse.Namespace) -> int:
    from sweep.config import load_config
    from sweep.cost import CostInputs
    from sweep.plot import plot_results

    cfg = load_config(args.tag)
    if cfg.kind != args.mode:
        raise ValueError(f"tag {cfg.tag!r} is a {cfg.kind} config ({cfg.path}); run `sweep {cfg.kind} {cfg.tag}`")
    serve = dict(cfg.serve)
    if args.base_url:
        serve["base_url"] = args.base_url
    if args.served_model:
        serve["model"] = args.served_model
    cfg = cfg.with_overrides(context=args.context, nextn=args.nextn, accept=args.accept, points=args.points,
                             warmup_steps=args.warmup_steps, measured_steps=args.measured_steps, serve=serve)
    out_dir = Path(args.out_dir) / cfg.tag
    results = out_dir / "results.jsonl"
    if args.plot_only:
        if not results.exists():
            raise FileNotFoundError(f"no results to plot: {results}")
        print(plot_results(results))
        if args.compare:
            print(plot_results(results, args.compare))
        return 0
    cost = CostInputs(args.price_per_gpu_hour, args.utilization, args.power_kw, args.pue, args.price_per_kwh)
    profile = args.profile or os.environ.get("PROFILE", "0") not in ("", "0")
    if profile and args.mode == "serve":
        print("note: PROFILE is ignored by the serving sweep (the server is another process)", file=sys.stderr)
        profile = False
    return _run_sweep(args.mode, cfg, out_dir, cost, profile, args.compare)


def _run_sweep(mode, cfg, out_dir: Path, cost, profile: bool, compare: list[str]) -> int:
    import torch

    from sweep import provenance
    from sweep.plot import plot_results
    from sweep.ranks import init_ranks, model_parallel_ranks
    from sweep.runner import run_sweep

    if mode == "serve" and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ValueError("the serving sweep is a single client process; run it without torchrun")
    if cfg.model_parallel > 1:
        ranks = model_parallel_ranks(cfg.device, cfg.tp, cfg.ep)
        if not ranks.is_main:  # serve rank 0's model steps until its engine closes; write nothing
            from engine.native.tensor_parallel import run_worker
            return run_worker(device=cfg.device, threads=cfg.threads)
    else:
        ranks = init_ranks(cfg.device)
    threads_before = torch.get_num_threads()
    impl = None
    try:
        if cfg.dp > 1 and not ranks.distributed and ranks.is_main:
            print(f"note: {cfg.tag} asks for dp={cfg.dp} ranks; launch under torchrun "
                  f"(bash sweep/run_sweep.sh does) - running 1 rank", file=sys.stderr)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        device = ranks.device_for(cfg.device)
        impl = _make_impl(mode, cfg, device)
        extra = {"tag": cfg.tag, "config_path": cfg.path, "model": cfg.model, "config": asdict(cfg)}
        if mode == "serve":  # only the public part of the URL: its query and user:password are secrets
            extra["base_url"] = extra["config"]["serve"]["base_url"] = impl.base.public
        prov = provenance.collect(device, cfg.dtype if mode != "serve" else None, ranks.layout(), extra)
        records = run_sweep(impl, cfg, ranks, out_dir, cost, prov, profile,
                            plot=lambda path, _cfg: plot_results(path))
        if ranks.is_main and compare:
            print(f"compare chart: {plot_results(out_dir / 'results.jsonl', compare)}", file=sys.stderr)
    finally:
        torch.set_num_threads(threads_before)  # in-process callers (tests) keep their setting
        if impl is not None:
            impl.close()  # idempotent; after a failure it still releases tp/ep worker ranks
        ranks.close()
    if not ranks.is_main:
        return 0
    print(out_dir / "results.jsonl")
    return 1 if any(r.status == "error" for r in records) else 0
