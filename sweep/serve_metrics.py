"""One serving point's metrics under the field's names (vLLM `bench serve` and InferenceX), from timed requests."""
from __future__ import annotations

from typing import Any

from sweep.cost_tiers import tier_costs
from sweep.field_names import interactivity, latency_stats
from sweep.serve_client import LoopLagMonitor, RequestResult
from sweep.timing import percentile

DEFINITIONS = {
    "ttft": "time to first token: request sent -> first chunk carrying content (ms)",
    "tpot": "time per output token, first token excluded: per request (E2EL - TTFT) / (output tokens - 1) (ms)",
    "itl": "inter-token latency: every gap between successive content-bearing chunks of every request "
           "(a chunk may carry >1 token) (ms)",
    "e2el": "end-to-end latency: request sent -> end of stream (ms)",
    "request_throughput": "completed requests / duration (first send to last finish), requests/s",
    "output_throughput": "output tokens of completed requests (server usage) / duration, tokens/s",
    "total_token_throughput": "(prompt + output tokens of completed requests) / duration, tokens/s",
    "request_goodput": "completed requests meeting every per-request SLO in serve.slo / duration, requests/s",
    "tput_per_gpu": "total_token_throughput / serve.gpus (InferenceX)",
    "output_tput_per_gpu": "output_throughput / serve.gpus (InferenceX)",
    "intvty": "interactivity = 1000 / median_tpot_ms, tokens/s/user (InferenceX; <stat>_intvty per TPOT statistic)",
    "client_loop_lag_ms": "how late the client's event loop woke for a 5 ms timer (client overhead)",
    "client_parse_fraction": "client time decoding SSE events / wall time",
}
_SLO_VALUE = {"ttft_ms": lambda r: (r.ttft_s or 0) * 1e3, "tpot_ms": lambda r: (r.tpot_s or 0) * 1e3,
              "e2e_ms": lambda r: r.e2e_s * 1e3, "e2el_ms": lambda r: r.e2e_s * 1e3}


def meets(r: RequestResult, slo: dict[str, float]) -> bool:
    """Whether one request meets every per-request SLO (vLLM's goodput rule)."""
    return all(_SLO_VALUE[k](r) <= v for k, v in slo.items())


def serve_metrics(results: list[RequestResult], wall: float, monitor: LoopLagMonitor, gpus: int,
                  slo: dict[str, float], prices: dict[str, float] | None) -> dict[str, Any]:
    """vLLM's and InferenceX's fields (plus the client's own health) for one measured point."""
    ok = [r for r in results if r.ok]
    ms = lambda xs: [x * 1e3 for x in xs]  # noqa: E731
    out_tokens = sum(r.output_tokens for r in ok)
    prompt_known = [r.prompt_tokens for r in ok if r.prompt_tokens]
    in_tokens = sum(prompt_known)
    m: dict[str, Any] = {
        "requests": len(results), "completed": len(ok), "failed": len(results) - len(ok), "duration": wall,
        "total_input_tokens": in_tokens, "total_output_tokens": out_tokens,
        "output_tokens_per_request": out_tokens / len(ok),
        "prompt_tokens_per_request": in_tokens / len(prompt_known) if prompt_known else None,
        "token_source": sorted({r.token_source for r in ok}),
        "request_throughput": len(ok) / wall,
        "output_throughput": out_tokens / wall,
        "total_token_throughput": (in_tokens + out_tokens) / wall,
    }
    m |= latency_stats("ttft", ms([r.ttft_s for r in ok]))
    m |= latency_stats("tpot", ms([r.tpot_s for r in ok if r.tpot_s is not None]))
    m |= latency_stats("itl", ms([g for r in ok for g in r.itl_s]))
    m |= latency_stats("e2el", ms([r.e2e_s for r in ok]))
    m["tput_per_gpu"] = m["total_token_throughput"] / gpus
    m["output_tput_per_gpu"] = m["output_throughput"] / gpus
    m["input_tput_per_gpu"] = in_tokens / wall / gpus
    m |= interactivity(m)
    if slo:
        good = sum(1 for r in ok if meets(r, slo))
        m["request_goodput"] = m["goodput"] = good / wall  # vLLM's JSON key, and the name its console prints
        m["goodput_fraction"] = good / len(results)
    if prices:
        m |= tier_costs(m["tput_per_gpu"], m["output_tput_per_gpu"], prices)
    m |= _client_health(results, wall, monitor, m)
    m["errors"] = sorted({r.error for r in results if r.error})[:5]
    return m


def _client_health(results: list[RequestResult], wall: float, monitor: LoopLagMonitor,
                   m: dict[str, Any]) -> dict[str, Any]:
    lags = [x * 1e3 for x in monitor.lags_s]
    h: dict[str, Any] = {
        "client_loop_lag_ms_p50": percentile(lags, 50) if lags else None,
        "client_loop_lag_ms_p99": percentile(lags, 99) if lags else None,
        "client_loop_lag_ms_max": max(lags) if lags else None,
        "client_parse_fraction": sum(r.parse_s for r in results) / wall,
    }
    # The client caps the numbers when its own delays approach what it measures.
    itl_p50 = m["p50_itl_ms"] or m["p50_ttft_ms"]
    h["client_limited"] = bool(lags) and (h["client_loop_lag_ms_p99"] > max(5.0, 0.2 * itl_p50)
                                          or h["client_parse_fraction"] > 0.25)
    return h
