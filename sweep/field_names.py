"""The field's names for sweep metrics: vLLM `bench serve` keys, InferenceX keys, and old-record upgrades.

vLLM (`vllm bench serve --save-result`) writes `{mean,median,std,p<q>}_{ttft,tpot,itl,e2el}_ms`,
`request_throughput`, `output_throughput`, `total_token_throughput` and `request_goodput`.
InferenceX (utils/process_result.py) divides throughput by the GPUs (`tput_per_gpu`, `output_tput_per_gpu`)
and turns every TPOT statistic into interactivity, `<stat>_intvty` = 1000 / `<stat>_tpot_ms`.
"""
from __future__ import annotations

import statistics
from typing import Any

from sweep.timing import percentile

LATENCIES = ("ttft", "tpot", "itl", "e2el")
STATS = ("mean", "median", "std", "p50", "p90", "p99")
INTERACTIVITY_STATS = ("mean", "median", "p50", "p90", "p99")  # 1000 / std means nothing

# Records written before the field's names (schema 1) are read under the new names as well.
_LEGACY_SERVE = {"request_throughput_rps": "request_throughput", "output_tokens_per_s": "output_throughput",
                 "goodput_rps": "request_goodput", "wall_s": "duration"}
_LEGACY_ALIASES = {  # same meaning in every sweep kind
    "output_tokens_per_s_per_gpu": "output_tput_per_gpu",
    "input_tokens_per_s_per_gpu": "input_tput_per_gpu",
    "tokens_per_s_per_user": "intvty",
}


def latency_stats(name: str, values_ms: list[float]) -> dict[str, float | None]:
    """`mean_<name>_ms`, `median_...`, `std_...` (population, as numpy) and `p50/p90/p99_...`."""
    if not values_ms:
        return {f"{s}_{name}_ms": None for s in STATS}
    out: dict[str, float | None] = {
        f"mean_{name}_ms": statistics.fmean(values_ms),
        f"median_{name}_ms": statistics.median(values_ms),
        f"std_{name}_ms": statistics.pstdev(values_ms),
    }
    for q in (50, 90, 99):
        out[f"p{q}_{name}_ms"] = percentile(values_ms, q)
    return out


def interactivity(metrics: dict[str, Any]) -> dict[str, float | None]:
    """InferenceX's `<stat>_intvty` = 1000 / `<stat>_tpot_ms` (tokens/s/user), and `intvty` = the median's."""
    out: dict[str, float | None] = {}
    for s in INTERACTIVITY_STATS:
        tpot = metrics.get(f"{s}_tpot_ms")
        out[f"{s}_intvty"] = 1e3 / tpot if tpot else None
    out["intvty"] = out["median_intvty"]
    return out


def upgrade_metrics(kind: str, metrics: dict[str, Any], schema_version: int) -> dict[str, Any]:
    """Metrics of an older record with the current names filled in (old names kept): old folders stay readable."""
    if schema_version >= 2 or not metrics:
        return metrics
    m = dict(metrics)
    if kind == "serve":
        for old, new in _LEGACY_SERVE.items():
            if old in m and new not in m:
                m[new] = m[old]
        for lat, old in (("ttft", "ttft_ms"), ("tpot", "tpot_ms"), ("itl", "itl_ms"), ("e2el", "e2e_ms")):
            for q in (50, 90, 99):
                m.setdefault(f"p{q}_{lat}_ms", m.get(f"{old}_p{q}"))
            m.setdefault(f"median_{lat}_ms", m.get(f"{old}_p50"))
            m.setdefault(f"mean_{lat}_ms", m.get(f"{old}_mean"))
    for old, new in _LEGACY_ALIASES.items():
        if old in m and new not in m:
            m[new] = m[old]
    return m


def slo_metric(name: str) -> str:
    """'ttft_p99_ms' (the --sla spelling) -> 'p99_ttft_ms' (the record key); e2e is read as e2el."""
    parts = name.split("_")
    if len(parts) != 3 or parts[2] != "ms":
        raise ValueError(f"SLO {name!r}: expected <metric>_<stat>_ms, e.g. ttft_p99_ms or tpot_median_ms")
    metric, stat = parts[0], parts[1]
    metric = "e2el" if metric == "e2e" else metric
    if metric not in LATENCIES or stat not in STATS or stat == "std":
        raise ValueError(f"SLO {name!r}: metric must be one of {', '.join(LATENCIES)} and statistic one of "
                         "mean, median, p50, p90, p99")
    return f"{stat}_{metric}_ms"
