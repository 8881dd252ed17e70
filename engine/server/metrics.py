"""Prometheus text exposition (format 0.0.4) of what the server measures and what the engine reports."""
from __future__ import annotations

import bisect
import math
import threading
from typing import Any

# Bucket edges in seconds, close to vLLM's, with finer steps where CPU decoding lands.
TTFT_BUCKETS = (0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)
TPOT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
QUEUE_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0)
E2E_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 120.0, 300.0, 600.0)


class Histogram:
    """Cumulative-bucket histogram; observe() is thread-safe so engine threads may record too."""

    def __init__(self, name: str, help_text: str, buckets: tuple[float, ...]) -> None:
        self.name, self.help, self.buckets = name, help_text, tuple(buckets)
        self.counts = [0] * (len(self.buckets) + 1)
        self.sum = 0.0
        self.count = 0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        with self._lock:
            self.counts[bisect.bisect_left(self.buckets, value)] += 1
            self.sum += value
            self.count += 1

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        with self._lock:
            running = 0
            for edge, n in zip(self.buckets, self.counts):
                running += n
                lines.append(f'{self.name}_bucket{{le="{_num(edge)}"}} {running}')
            lines.append(f'{self.name}_bucket{{le="+Inf"}} {self.count}')
            lines.append(f"{self.name}_sum {_num(self.sum)}")
            lines.append(f"{self.name}_count {self.count}")
        return lines


def _num(v: float) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    return repr(float(v)) if isinstance(v, float) else str(v)


def _scalar(kind: str, name: str, help_text: str, value: float) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {_num(value)}"]


# Engine stats keys (see adapter.ServingAdapter.stats) -> (metric name, type, help).
ENGINE_METRICS: dict[str, tuple[str, str, str]] = {
    "requests_running": ("harness_engine_requests_running", "gauge", "Requests the engine is decoding or prefilling."),
    "requests_waiting": ("harness_engine_requests_waiting", "gauge", "Requests queued inside the engine."),
    "kv_blocks_total": ("harness_kv_blocks_total", "gauge", "KV cache blocks in the pool."),
    "kv_blocks_used": ("harness_kv_blocks_used", "gauge", "KV cache blocks held by live requests."),
    "kv_blocks_free": ("harness_kv_blocks_free", "gauge", "KV cache blocks free (cached prefixes included)."),
    "kv_block_size": ("harness_kv_block_size_tokens", "gauge", "Tokens per KV cache block."),
    "prefix_cache_queries": ("harness_prefix_cache_queries_total", "counter", "Prompt blocks looked up in the prefix cache."),
    "prefix_cache_hits": ("harness_prefix_cache_hits_total", "counter", "Prompt blocks found in the prefix cache."),
    "prefix_cache_hit_rate": ("harness_prefix_cache_hit_rate", "gauge", "Prefix-cache hits / queries since start."),
    "spec_drafted_tokens": ("harness_spec_decode_drafted_tokens_total", "counter", "Tokens proposed by speculative decoding."),
    "spec_accepted_tokens": ("harness_spec_decode_accepted_tokens_total", "counter", "Drafted tokens accepted by the target model."),
    "preemptions": ("harness_engine_preemptions_total", "counter", "Requests preempted (recomputed) for lack of KV blocks."),
    "aborted_requests": ("harness_engine_aborted_requests_total", "counter", "Requests the engine aborted (client gone)."),
}


class ServerMetrics:
    """Counters the front end measures itself, plus a pull of the engine's own stats at scrape time."""

    def __init__(self) -> None:
        self.ttft = Histogram("harness_time_to_first_token_seconds", "Time from arrival to the first output token.", TTFT_BUCKETS)
        self.tpot = Histogram("harness_time_per_output_token_seconds", "(E2E - TTFT) / (output tokens - 1) per request.", TPOT_BUCKETS)
        self.e2e = Histogram("harness_e2e_request_latency_seconds", "Arrival to last token, per request (choice).", E2E_BUCKETS)
        self.queue = Histogram("harness_request_queue_time_seconds",
                               "Per request: arrival to its first admission slot.", QUEUE_BUCKETS)
        self.sequence_queue = Histogram("harness_sequence_queue_time_seconds",
                                        "Per sequence (choice): request arrival to that sequence's slot.", QUEUE_BUCKETS)
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.requests_finished: dict[str, int] = {}
        self.requests_rejected: dict[int, int] = {}
        self.requests_cancelled = 0

    def finished(self, reason: str) -> None:
        self.requests_finished[reason] = self.requests_finished.get(reason, 0) + 1

    def rejected(self, status: int) -> None:
        self.requests_rejected[status] = self.requests_rejected.get(status, 0) + 1

    def render(self, running: int, waiting: int, engine_stats: dict[str, Any], connections: Any = None) -> str:
        lines: list[str] = []
        if connections is not None:
            lines += _scalar("gauge", "harness_connections_open", "Open HTTP connections.", connections.total)
            lines += _scalar("counter", "harness_connections_refused_total",
                             "Connections closed on arrival: over the total or per-address cap.", connections.refused)
            lines += _scalar("counter", "harness_connections_header_timeouts_total",
                             "Connections closed because their request headers did not arrive in time.",
                             connections.header_timeouts)
        lines += _scalar("gauge", "harness_requests_running", "Sequences holding an admission slot (inside the engine).", running)
        lines += _scalar("gauge", "harness_requests_waiting", "Requests in the server's bounded waiting queue (no sequence started yet).", waiting)
        lines += _scalar("counter", "harness_prompt_tokens_total", "Prompt tokens of admitted requests.", self.prompt_tokens)
        lines += _scalar("counter", "harness_generation_tokens_total", "Output tokens streamed or returned.", self.generation_tokens)
        lines += ["# HELP harness_requests_finished_total Finished requests (choices) by finish reason.",
                  "# TYPE harness_requests_finished_total counter"]
        for reason in sorted(set(self.requests_finished) | {"stop", "length", "error"}):
            lines.append(f'harness_requests_finished_total{{finished_reason="{reason}"}} {self.requests_finished.get(reason, 0)}')
        lines += ["# HELP harness_requests_rejected_total Requests refused before any work, by HTTP status.",
                  "# TYPE harness_requests_rejected_total counter"]
        for status in sorted(set(self.requests_rejected) | {400, 401, 429}):
            lines.append(f'harness_requests_rejected_total{{status="{status}"}} {self.requests_rejected.get(status, 0)}')
        lines += _scalar("counter", "harness_requests_cancelled_total", "Requests cancelled because the client went away.",
                         self.requests_cancelled)
        for hist in (self.ttft, self.tpot, self.e2e, self.queue, self.sequence_queue):
            lines += hist.render()
        for key, (name, kind, help_text) in ENGINE_METRICS.items():
            if key in engine_stats and engine_stats[key] is not None:
                lines += _scalar(kind, name, help_text, engine_stats[key])
        return "\n".join(lines) + "\n"


def parse_metrics(text: str) -> dict[str, float]:
    """Sample name (with labels) -> value; for tests and for the serving sweep."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out

