"""One sweep from a tag to results.jsonl: the config with the command's overrides, then, on this process's
ranks, the sweep kind, its provenance, the tag's eval, and the point loop or the SLA search."""
from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweep.config import SweepConfig, load_config

if TYPE_CHECKING:  # torch loads only when a sweep runs, not for --plot-only
    from sweep.cost import CostInputs
    from sweep.ranks import Ranks


@dataclass
class SlaRequest:
    """What `--sla` asks: SLOs (record key -> limit in ms), the load searched over, and its range."""

    slos: dict[str, float]
    over: str  # concurrency | rate
    lo: float | None = None
    hi: float | None = None


def configure(tag: str, mode: str, *, base_url: str | None = None, served_model: str | None = None,
              gpu_type: str | None = None, tier_prices: str | None = None, **overrides: Any) -> SweepConfig:
    """The tag's config with the command's overrides; refuses a tag of another sweep kind."""
    cfg = load_config(tag)
    if cfg.kind != mode:
        raise ValueError(f"tag {cfg.tag!r} is a {cfg.kind} config ({cfg.path}); run `sweep {cfg.kind} {cfg.tag}`")
    serve = dict(cfg.serve)
    if base_url:
        serve["base_url"] = base_url
    if served_model:
        serve["model"] = served_model
    if gpu_type:
        serve["gpu_type"] = gpu_type
    if tier_prices:
        from sweep.cost_tiers import parse_tier_prices
        serve["tier_prices"] = parse_tier_prices(tier_prices)
    return cfg.with_overrides(**overrides, serve=serve)


def sla_request(mode: str, text: str, over: str, lo: float | None, hi: float | None) -> SlaRequest:
    if mode != "serve":
        raise ValueError("--sla applies to the serving sweep only")
    from sweep.sla import parse_sla
    return SlaRequest(parse_sla(text), over, lo, hi)


def plot_only(out_dir: Path, compare: list[str]) -> int:
    """Redraw the chart(s) from results already written; nothing is measured."""
    from sweep.plot import plot_results

    results = out_dir / "results.jsonl"
    if not results.exists():
        raise FileNotFoundError(f"no results to plot: {results}")
    print(plot_results(results))
    if compare:
        print(plot_results(results, compare))
    return 0


def wants_profile(mode: str, flag: bool) -> bool:
    """--profile or PROFILE=1; the serving sweep cannot profile a server in another process."""
    profile = flag or os.environ.get("PROFILE", "0") not in ("", "0")
    if profile and mode == "serve":
        print("note: PROFILE is ignored by the serving sweep (the server is another process)", file=sys.stderr)
        return False
    return profile


def make_impl(mode: str, cfg: SweepConfig, device: str) -> Any:
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


def run_on_ranks(mode: str, cfg: SweepConfig, ranks: Ranks, out_dir: Path, cost: CostInputs, profile: bool,
                 compare: list[str], sla: SlaRequest | None = None) -> int:
    """The sweep on ranks already set up (rank 0 writes); the exit code: 1 when a point ended in error."""
    import torch

    from sweep import provenance
    from sweep.plot import plot_results
    from sweep.runner import run_sweep

    threads_before = torch.get_num_threads()
    impl = None
    try:
        if cfg.dp > 1 and not ranks.distributed and ranks.is_main:
            print(f"note: {cfg.tag} asks for dp={cfg.dp} ranks; launch under torchrun "
                  f"(bash sweep/run_sweep.sh does) - running 1 rank", file=sys.stderr)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        device = ranks.device_for(cfg.device)
        accuracy = point_accuracy(cfg, device, out_dir) if ranks.is_main else None  # before the sweep's engine loads
        impl = make_impl(mode, cfg, device)
        extra = {"tag": cfg.tag, "config_path": cfg.path, "model": cfg.model, "config": asdict(cfg)}
        if mode == "serve":  # only the public part of the URL: its query and user:password are secrets
            extra["base_url"] = extra["config"]["serve"]["base_url"] = impl.base.public
        prov = provenance.collect(device, cfg.dtype if mode != "serve" else None, ranks.layout(), extra)
        if sla:
            records = sla_search(impl, cfg, ranks, out_dir, cost, prov, sla)
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


def point_accuracy(cfg: SweepConfig, device: str, out_dir: Path) -> dict | None:
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


def sla_search(impl: Any, cfg: SweepConfig, ranks: Ranks, out_dir: Path, cost: CostInputs, prov: dict,
               sla: SlaRequest) -> list:
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

    result = sla_search.run_search(impl, sla.slos, sla.over, sla.lo, sla.hi, run_point)
    path = sla_search.write(result, out_dir)
    best = result.best_point
    if best is None:
        print(f"SLA: no load in the searched range meets {sla.slos}; see {path}", file=sys.stderr)
    else:
        load = best["concurrency"] if sla.over == "concurrency" else best["rate"]
        print(f"SLA: highest {sla.over} meeting {sla.slos}: {load} (request_goodput "
              f"{result.best_metrics.get('request_goodput') or 0:.3g}/s); {path}", file=sys.stderr)
    print(f"chart: {plot_results(out_dir / 'results.jsonl')}", file=sys.stderr)
    return written
