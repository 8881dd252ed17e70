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
    if args.gpu_type:
        serve["gpu_type"] = args.gpu_type
    if args.tier_prices:
        from sweep.cost_tiers import parse_tier_prices
        serve["tier_prices"] = parse_tier_prices(args.tier_prices)
    sla = None
    if args.sla:
        if args.mode != "serve":
            raise ValueError("--sla applies to the serving sweep only")
        from sweep.sla import parse_sla
        sla = (parse_sla(args.sla), args.sla_over, args.sla_min, args.sla_max)
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
    return _run_sweep(args.mode, cfg, out_dir, cost, profile, args.compare, sla)


def _run_sweep(mode, cfg, out_dir: Path, cost, profile: bool, compare: list[str], sla=None) -> int:
    import torch

    from engine.native.ranks import DIST_TIMEOUT_S, launched
    from sweep import provenance
    from sweep.plot import plot_results
    from sweep.ranks import init_ranks, model_parallel_ranks
    from sweep.runner import run_sweep

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
    threads_before = torch.get_num_threads()
    impl = None
    try:
        if cfg.dp > 1 and not ranks.distributed and ranks.is_main:
            print(f"note: {cfg.tag} asks for dp={cfg.dp} ranks; launch under torchrun "
                  f"(bash sweep/run_sweep.sh does) - running 1 rank", file=sys.stderr)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        device = ranks.device_for(cfg.device)
        accuracy = _point_accuracy(cfg, device, out_dir) if ranks.is_main else None  # before the sweep's engine loads
        impl = _make_impl(mode, cfg, device)
        extra = {"tag": cfg.tag, "config_path": cfg.path, "model": cfg.model, "config": asdict(cfg)}
        if mode == "serve":  # only the public part of the URL: its query and user:password are secrets
            extra["base_url"] = extra["config"]["serve"]["base_url"] = impl.base.public
        prov = provenance.collect(device, cfg.dtype if mode != "serve" else None, ranks.layout(), extra)
        if sla:
            records = _sla_search(impl, cfg, ranks, out_dir, cost, prov, sla)
        else:
            records = run_sweep(impl, cfg, ranks, out_dir, cost, prov, profile,
                                plot=lambda path, _cfg: plot_results(path), accuracy=accuracy)
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


def _point_accuracy(cfg, device: str, out_dir: Path) -> dict | None:
    """The tag's [eval] graded at its engine configuration; a failed eval is recorded, the sweep still runs."""
    from sweep.point_eval import eval_spec, evaluate

    spec = eval_spec(cfg)  # a malformed [eval] table stops here, before anything runs
    if spec is None:
        return None
    try:
        return evaluate(cfg, device, out_dir)
    except Exception as exc:  # noqa: BLE001 - the speed numbers are still worth measuring
        print(f"eval failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return {"task": spec.task, "error": f"{type(exc).__name__}: {exc}"[:2000], "coverage_complete": False,
                "pass@1": None}


def _sla_search(impl, cfg, ranks, out_dir: Path, cost, prov, sla) -> list:
    """Bisect the serving load for the SLA; every probe is a recorded point, the answer goes to sla.json."""
    from sweep import sla as sla_search
    from sweep.plot import plot_results
    from sweep.records import ResultsFile, point_key
    from sweep.runner import run_sweep

    written: list = []

    def run_point(point):
        impl.only = [point]
        written.extend(run_sweep(impl, cfg, ranks, out_dir, cost, prov))
        return ResultsFile(out_dir / "results.jsonl").latest()[point_key("serve", point)]

    slos, over, lo, hi = sla
    result = sla_search.run_search(impl, slos, over, lo, hi, run_point)
    path = sla_search.write(result, out_dir)
    best = result.best_point
    if best is None:
        print(f"SLA: no load in the searched range meets {slos}; see {path}", file=sys.stderr)
    else:
        load = best["concurrency"] if over == "concurrency" else best["rate"]
        print(f"SLA: highest {over} meeting {slos}: {load} (request_goodput "
              f"{result.best_metrics.get('request_goodput') or 0:.3g}/s); {path}", file=sys.stderr)
    print(f"chart: {plot_results(out_dir / 'results.jsonl')}", file=sys.stderr)
    return written
