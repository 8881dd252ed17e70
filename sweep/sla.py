"""SLA search: the highest load (concurrency, or Poisson request rate) whose latency percentiles meet every SLO.

Latency grows with load, so "meets the SLA" is monotone in the load and bisection finds the boundary in
log2(range) measured points. Each probe is an ordinary serving point (recorded in results.jsonl, resumable);
the answer goes to sla.json beside it and is starred on the Pareto chart.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from sweep.field_names import slo_metric

SLA_FILE = "sla.json"
# --sla names that also have a per-request form, used for goodput at the answer (vLLM's goodput rule)
_PER_REQUEST = {"ttft": "ttft_ms", "tpot": "tpot_ms", "e2el": "e2el_ms"}
RATE_STEPS = 6  # bisection rounds over a request-rate range: the answer is within range / 64


@dataclass
class SlaResult:
    """What the search asked, what it measured, and the highest passing load (None when none passes)."""

    sla: dict[str, float]  # record key (e.g. p99_ttft_ms) -> limit in ms
    over: str  # concurrency | rate
    best_point: dict[str, Any] | None = None
    best_metrics: dict[str, Any] = field(default_factory=dict)
    probes: list[dict[str, Any]] = field(default_factory=list)
    definition: str = ("highest load whose percentiles meet every SLO, by bisection; goodput = requests meeting "
                       "the per-request form of each SLO / duration")


def parse_sla(text: str) -> dict[str, float]:
    """'ttft_p99_ms=2000,tpot_p99_ms=100' -> {'p99_ttft_ms': 2000.0, 'p99_tpot_ms': 100.0}."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"--sla: {part!r} is not NAME=MS, e.g. ttft_p99_ms=2000")
        try:
            out[slo_metric(name.strip())] = float(value)
        except ValueError as exc:
            raise ValueError(f"--sla: {exc}") from None
    if not out:
        raise ValueError("--sla needs at least one NAME=MS, e.g. ttft_p99_ms=2000,tpot_p99_ms=100")
    return out


def per_request_slo(sla: dict[str, float]) -> dict[str, float]:
    """The per-request thresholds for goodput: p99_ttft_ms=2000 -> ttft_ms=2000 (ITL has no per-request form)."""
    out: dict[str, float] = {}
    for key, limit in sla.items():
        metric = key.split("_")[1]
        if metric in _PER_REQUEST:
            out[_PER_REQUEST[metric]] = min(limit, out.get(_PER_REQUEST[metric], limit))
    return out


def passes(metrics: dict[str, Any], sla: dict[str, float]) -> bool:
    return all(metrics.get(k) is not None and metrics[k] <= limit for k, limit in sla.items())


def search(measure: Callable[[float], tuple[str, dict[str, Any], dict[str, Any]]], sla: dict[str, float],
           over: str, lo: float, hi: float) -> SlaResult:
    """Bisect load in [lo, hi]; measure(load) -> (status, point, metrics). Concurrency is searched in integers."""
    result = SlaResult(sla=sla, over=over)
    seen: dict[float, bool] = {}

    def ok(load: float) -> bool:
        if load not in seen:
            status, point, metrics = measure(load)
            seen[load] = status == "ok" and passes(metrics, sla)
            result.probes.append({"load": load, "point": point, "status": status, "passed": seen[load],
                                  **{k: metrics.get(k) for k in sla}})
            if seen[load] and (result.best_point is None or load > _load(result.best_point, over)):
                result.best_point, result.best_metrics = point, _headline(metrics)
        return seen[load]

    if not ok(lo) or ok(hi):
        return result
    if over == "concurrency":
        lo_i, hi_i = int(lo), int(hi)
        while hi_i - lo_i > 1:
            mid = (lo_i + hi_i) // 2
            lo_i, hi_i = (mid, hi_i) if ok(mid) else (lo_i, mid)
    else:
        for _ in range(RATE_STEPS):
            mid = float(f"{(lo + hi) / 2:.4g}")  # a stable point key for resume
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return result


def _load(point: dict[str, Any], over: str) -> float:
    return float(point["concurrency"] if over == "concurrency" else point["rate"])


def _headline(m: dict[str, Any]) -> dict[str, Any]:
    keys = ("request_goodput", "goodput_fraction", "request_throughput", "output_throughput", "output_tput_per_gpu",
            "intvty", "p99_ttft_ms", "p99_tpot_ms", "p99_itl_ms", "p99_e2el_ms", "median_ttft_ms", "median_tpot_ms")
    return {k: m.get(k) for k in keys}


def write(result: SlaResult, folder: Path) -> Path:
    path = folder / SLA_FILE
    path.write_text(json.dumps(asdict(result), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read(folder: Path) -> dict[str, Any] | None:
    """sla.json beside a results file, or None (a malformed one is an error naming the file)."""
    path = folder / SLA_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None


def run_search(impl: Any, sla: dict[str, float], over: str, lo: float | None, hi: float | None,
               run_point: Callable[[dict[str, Any]], Any]) -> SlaResult:
    """Search a ServeSweep's load; run_point(point) measures (or, on resume, finds) it and returns its record."""
    if over not in ("concurrency", "rate"):
        raise ValueError(f"--sla-over must be concurrency or rate, got {over!r}")
    impl.slo = {**impl.slo, **per_request_slo(sla)}  # goodput at every probe counts the SLA's requests
    cap = max(impl.cfg.points)
    if over == "concurrency":
        lo, hi = int(lo or 1), int(hi or cap)
        make = lambda load: impl.point(int(load), None)  # noqa: E731
    else:
        rates = impl.s.get("rates") or []
        lo, hi = float(lo or (min(rates) if rates else 0.5)), float(hi or (max(rates) if rates else 0))
        if hi <= 0:
            raise ValueError("--sla-over rate needs --sla-max RATE (requests/s) or serve.rates in the tag")
        make = lambda load: impl.point(cap, float(load))  # noqa: E731
    if not 0 < lo < hi:
        raise ValueError(f"SLA search range must satisfy 0 < low < high, got {lo}..{hi}")

    def measure(load: float) -> tuple[str, dict[str, Any], dict[str, Any]]:
        point = make(load)
        record = run_point(point)
        return record.status, point, record.metrics

    return search(measure, sla, over, lo, hi)
