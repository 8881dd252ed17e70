"""The point loop shared by every sweep kind: skip finished points, measure, reduce across ranks,
record (rank 0 only), keep going after a failed point, then draw the Pareto chart."""
from __future__ import annotations

import datetime as _dt
import gc
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

import torch

from sweep.config import SweepConfig
from sweep.cost import CostInputs, cost_block
from sweep.ranks import Ranks
from sweep.records import ResultsFile, SweepRecord, point_key


@dataclass
class Measurement:
    """What one rank measured at one point: seconds per measured step and the work in each step."""

    step_times_s: list[float]
    work: dict[str, float] = field(default_factory=dict)  # per step on this rank: tokens, images...
    info: dict[str, Any] = field(default_factory=dict)  # anything else worth recording


@dataclass
class Outcome:
    """Metrics of a point after the cross-rank reduction."""

    metrics: dict[str, Any]
    definitions: dict[str, str]
    denominators: dict[str, Any]
    cost_rates: dict[str, float | None] = field(default_factory=dict)  # name -> tokens/s/GPU for $/M
    steps: dict[str, int] | None = None  # overrides the warm-up/measured step counts (serve: requests)


class SweepKind(Protocol):
    kind: str

    def points(self) -> list[dict[str, Any]]: ...
    def setup(self) -> None: ...
    def describe(self) -> dict[str, Any]: ...
    def measure(self, point: dict[str, Any], trace_path: Path | None) -> Measurement: ...
    def summarise(self, point: dict[str, Any], step_times_s: list[float], work: dict[str, float],
                  infos: list[dict[str, Any]], gpus: int) -> Outcome: ...
    def close(self) -> None: ...


def classify_failure(exc: BaseException) -> tuple[str, str]:
    """(status, reason): allocator failures on any device are 'oom', everything else 'error'."""
    text = f"{type(exc).__name__}: {exc}".strip()
    oom_types = tuple(t for t in (getattr(torch, "OutOfMemoryError", None), MemoryError) if t)
    lowered = str(exc).lower()
    if isinstance(exc, oom_types) or "out of memory" in lowered or "can't allocate memory" in lowered:
        return "oom", text[:2000]
    return "error", text[:2000]


def _reduce(measurements: list[Measurement]) -> tuple[list[float], dict[str, float]]:
    """Slowest rank per step (a data-parallel step ends when its last rank does); work summed."""
    n = min(len(m.step_times_s) for m in measurements)
    step_times = [max(m.step_times_s[i] for m in measurements) for i in range(n)]
    work: dict[str, float] = {}
    for m in measurements:
        for k, v in m.work.items():
            work[k] = work.get(k, 0.0) + v
    return step_times, work


def _free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_sweep(impl: SweepKind, cfg: SweepConfig, ranks: Ranks, out_dir: Path, cost: CostInputs,
              provenance: dict[str, Any], profile: bool = False,
              plot: Callable[[Path, SweepConfig], Path | None] | None = None,
              log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
              accuracy: dict[str, Any] | None = None) -> list[SweepRecord]:
    """Run every unfinished point of a sweep; returns the records written (rank 0) or [] (others).

    `accuracy`: the eval graded at this sweep's engine configuration, recorded with every measured point."""
    results = ResultsFile(out_dir / "results.jsonl")
    finished = ranks.gather(results.finished_keys() if ranks.is_main else None)[0]
    todo = [p for p in impl.points() if point_key(impl.kind, p, profile) not in finished]
    skipped = len(impl.points()) - len(todo)
    if ranks.is_main and skipped:
        log(f"resuming: {skipped} finished point(s) skipped")
    written: list[SweepRecord] = []
    if todo:
        try:
            impl.setup()
            setup_error = None
        except Exception as exc:  # every rank must learn of it, or the others wait forever in gather
            setup_error = exc
        failed = [(r, e) for r, e in enumerate(ranks.gather(None if setup_error is None else str(setup_error))) if e]
        if setup_error is not None and not ranks.distributed:
            raise setup_error
        if failed:
            raise ValueError("; ".join(f"rank {r}: {e}" for r, e in failed))
        provenance = {**provenance, **impl.describe()}
    for point in todo:
        started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        t0 = time.perf_counter()
        trace = None
        if profile:
            name = "-".join(f"{k}{v}" for k, v in sorted(point.items()))
            trace = out_dir / "traces" / f"{impl.kind}-{name}-rank{ranks.rank}.json"
        try:
            local: tuple[str, str | None, Measurement | None] = ("ok", None, impl.measure(point, trace))
        except Exception as exc:  # a failed point is recorded; the sweep goes on
            status, reason = classify_failure(exc)
            local = (status, reason, None)
        _free_memory()
        gathered = ranks.gather(local)
        failures = [(r, s, why) for r, (s, why, _) in enumerate(gathered) if s != "ok"]
        record = SweepRecord(tag=cfg.tag, kind=impl.kind, point=point, status="ok", provenance=provenance,
                             profiled=profile, started_at=started, accuracy=accuracy,
                             steps={"warmup": cfg.warmup_steps, "measured": cfg.measured_steps})
        if failures:
            record.status = "oom" if any(s == "oom" for _, s, _ in failures) else "error"
            record.reason = "; ".join(f"rank {r}: {why}" for r, _, why in failures)
        else:
            measurements = [m for _, _, m in gathered]
            try:
                step_times, work = _reduce(measurements)
                outcome = impl.summarise(point, step_times, work, [m.info for m in measurements], ranks.devices)
                record.metrics = outcome.metrics
                record.definitions = outcome.definitions
                record.denominators = outcome.denominators
                record.cost = cost_block(outcome.cost_rates, cost)
                record.steps = outcome.steps or {"warmup": cfg.warmup_steps, "measured": len(step_times)}
            except Exception as exc:  # e.g. a zero step time: record it rather than lose the sweep
                record.status, record.reason = "error", f"summarising: {type(exc).__name__}: {exc}"
        record.wall_s = round(time.perf_counter() - t0, 3)
        if ranks.is_main:
            results.append(record)
            written.append(record)
            log(_summary_line(record))
    impl.close()
    if ranks.is_main and plot is not None and results.path.exists():
        png = plot(results.path, cfg)
        if png:
            log(f"chart: {png}")
    return written


_HEADLINE = ("latency_ms", "input_tokens_per_s_per_gpu", "cached_tokens", "tokens_per_s_per_user",
             "output_tokens_per_s_per_gpu", "acceptance_length", "images_per_s_per_gpu", "patches_per_s_per_gpu",
             "median_ttft_ms", "median_tpot_ms", "p99_e2el_ms", "request_goodput", "failed", "client_loop_lag_ms_p99",
             "client_limited")


def _summary_line(record: SweepRecord) -> str:
    point = " ".join(f"{k}={v}" for k, v in record.point.items())
    if record.status != "ok":
        return f"[{record.kind}] {point}: {record.status.upper()} {record.reason}"
    shown = ", ".join(f"{k}={record.metrics[k]:.4g}" for k in _HEADLINE
                      if isinstance(record.metrics.get(k), (int, float)))
    acc = record.accuracy or {}
    if acc.get("pass@1") is not None:
        shown += f", {acc['task']} pass@1={acc['pass@1']:.3f}" + ("" if acc.get("coverage_complete") else " (INVALID)")
    return f"[{record.kind}] {point}: {shown}"
