"""`python -m harness sweep prefill|decode|encoder|serve TAG`: Pareto sweeps and a serving sweep."""
from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.native_flags import add_engine_arguments, engine_flags

HELP = "performance sweeps: prefill, decode, encoder (built-in engine) and serve (any OpenAI-compatible server)"
EXAMPLES = """\
  python -m harness sweep encoder ve-224
  python -m harness sweep prefill pe-2k --points 256,512
  python -m harness sweep decode ce-2k --context 512 --price-per-gpu-hour 2.5
  python -m harness sweep serve serve-local --base-url http://127.0.0.1:8000/v1
  python -m harness sweep serve serve-local --sla ttft_p99_ms=2000,tpot_p99_ms=100 --sla-max 64
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
    add_engine_arguments(p, engine_flags("nextn"), help_prefix="decode: ",
                         defaults={"nextn": (None, "the config's")})
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
    sla = p.add_argument_group("serve: SLA search (bisection for the highest load meeting every SLO)")
    sla.add_argument("--sla", metavar="SLOS", help="e.g. ttft_p99_ms=2000,tpot_p99_ms=100 (<ttft|tpot|itl|e2el>_"
                     "<mean|median|p50|p90|p99>_ms=LIMIT)")
    sla.add_argument("--sla-over", choices=("concurrency", "rate"), default="concurrency",
                     help="search concurrency (closed loop), or Poisson request rate at the highest concurrency")
    sla.add_argument("--sla-min", type=float, help="lowest load searched (default: 1, or the lowest serve.rates)")
    sla.add_argument("--sla-max", type=float, help="highest load searched (default: the largest point or rate)")
    cost = p.add_argument_group("cost per million tokens")
    cost.add_argument("--price-per-gpu-hour", type=float, default=0.0, help="$ per GPU-hour")
    cost.add_argument("--utilization", type=float, default=1.0, help="fraction of time the GPU does this work")
    cost.add_argument("--power-kw", type=float, default=0.0, help="average power per GPU (kW)")
    cost.add_argument("--pue", type=float, default=1.0, help="data-centre power usage effectiveness")
    cost.add_argument("--price-per-kwh", type=float, default=0.0, help="electricity price ($/kWh)")
    cost.add_argument("--gpu-type", help="serve: GPU behind the endpoint (h100, h200, b200, ...) for InferenceX's "
                      "three cost tiers (costh, costn, costr)")
    cost.add_argument("--tier-prices", help="serve: $/GPU-hour per InferenceX tier, h=..,n=..,r=.. (any device)")
    p.add_argument("--profile", action="store_true",
                   help="write torch profiler traces and mark records profiled (also PROFILE=1)")


def run(args: argparse.Namespace) -> int:
    from sweep.cost import CostInputs
    from sweep.orchestrate import configure, plot_only, sla_request, wants_profile

    cfg = configure(args.tag, args.mode, base_url=args.base_url, served_model=args.served_model,
                    gpu_type=args.gpu_type, tier_prices=args.tier_prices, context=args.context, nextn=args.nextn,
                    accept=args.accept, points=args.points, warmup_steps=args.warmup_steps,
                    measured_steps=args.measured_steps)
    sla = sla_request(args.mode, args.sla, args.sla_over, args.sla_min, args.sla_max) if args.sla else None
    out_dir = Path(args.out_dir) / cfg.tag
    if args.plot_only:
        return plot_only(out_dir, args.compare)
    cost = CostInputs(args.price_per_gpu_hour, args.utilization, args.power_kw, args.pue, args.price_per_kwh)
    return _run_sweep(args.mode, cfg, out_dir, cost, wants_profile(args.mode, args.profile), args.compare, sla)


def _run_sweep(mode, cfg, out_dir: Path, cost, profile: bool, compare: list[str], sla=None) -> int:
    from engine.native.ranks import DIST_TIMEOUT_S, launched
    from sweep.orchestrate import run_on_ranks
    from sweep.ranks import init_ranks, model_parallel_ranks

    if mode == "serve" and launched().world_size > 1:
        raise ValueError("the serving sweep is a single client process; run it without torchrun")
    if cfg.model_parallel > 1:
        from engine.native.rank_worker import serve_if_worker
        ranks = model_parallel_ranks(cfg.device, cfg.tp, cfg.ep, cfg.dp_attention)
        code = serve_if_worker(cfg.device, cfg.threads, DIST_TIMEOUT_S)  # rank 0's model steps; write nothing
        if code is not None:
            return code
    else:
        ranks = init_ranks(cfg.device)
    return run_on_ranks(mode, cfg, ranks, out_dir, cost, profile, compare, sla)
