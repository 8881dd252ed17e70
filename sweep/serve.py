"""Serving sweep: a streaming client against any OpenAI-compatible endpoint.

Points are concurrency levels (closed loop), optionally crossed with request rates (Poisson
arrivals, capped by the concurrency). Warm-up requests run before each point and are excluded.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import httpx

from engine.openai_endpoints import scrub, split_base_url
from sweep.config import SweepConfig
from sweep.runner import Measurement, Outcome
from sweep.serve_client import LoopLagMonitor, RequestResult, stream_request
from sweep.timing import percentile

SERVE_KEYS = {
    "base_url", "model", "endpoint", "input_tokens", "output_tokens", "prompts_file", "requests_per_point",
    "rates", "slo", "extra_body", "api_key_env", "timeout_s", "gpus", "temperature", "continuous_usage_stats",
}
DEFINITIONS = {
    "ttft_ms": "time to first token: request sent -> first chunk carrying content (ms)",
    "tpot_ms": "time per output token per request = (E2E - TTFT) / (output tokens - 1) (ms)",
    "itl_ms": "inter-token latency: gap between successive content-bearing chunks (a chunk may carry >1 token)",
    "e2e_ms": "request sent -> end of stream (ms)",
    "output_tokens_per_s": "sum of output tokens (server usage) / wall time from first send to last finish",
    "output_tokens_per_s_per_gpu": "output_tokens_per_s / GPUs serving the endpoint (config serve.gpus)",
    "tokens_per_s_per_user": "1 / median TPOT",
    "goodput_rps": "completed requests per second meeting every SLO in serve.slo",
    "client_loop_lag_ms": "how late the client's event loop woke for a 5 ms timer (client overhead)",
    "client_parse_fraction": "client time decoding SSE events / wall time",
}
# A few hundred frequent English words: each is one token in common BPE vocabularies, so a prompt of
# N words is close to N tokens; random order avoids accidental prefix-cache hits across requests.
_WORDS = ("time year people way day man thing woman life child world school state family student group "
          "country problem hand part place case week company system program question work government number "
          "night point home water room mother area money story fact month lot right study book eye job word "
          "business issue side kind head house service friend father power hour game line end member law car "
          "city community name president team minute idea kid body information back parent face others level "
          "office door health person art war history party result change morning reason research girl guy "
          "moment air teacher force education").split()


class ServeSweep:
    kind = "serve"

    def __init__(self, cfg: SweepConfig) -> None:
        unknown = sorted(set(cfg.serve) - SERVE_KEYS)
        if unknown:
            raise ValueError(f"{cfg.path}: unknown [serve] key(s) {', '.join(unknown)}; "
                             f"valid: {', '.join(sorted(SERVE_KEYS))}")
        s = cfg.serve
        if not s.get("base_url"):
            raise ValueError(f"{cfg.path}: [serve] base_url is required (or pass --base-url)")
        if s.get("endpoint", "chat") not in ("chat", "completions"):
            raise ValueError(f"{cfg.path}: serve.endpoint must be 'chat' or 'completions'")
        self.cfg = cfg
        self.s = s
        self.chat = s.get("endpoint", "chat") == "chat"
        # Query parameters and user:password stay in memory: sent with each request, never written.
        self.base = split_base_url(s["base_url"])
        self.url = self.base.public + ("/chat/completions" if self.chat else "/completions")
        self.gpus = int(s.get("gpus", 1))
        self.slo = dict(s.get("slo", {}))
        bad = set(self.slo) - {"ttft_ms", "tpot_ms", "e2e_ms"}
        if bad:
            raise ValueError(f"{cfg.path}: unknown serve.slo key(s) {sorted(bad)}; valid: ttft_ms, tpot_ms, e2e_ms")
        self.prompts = self._load_prompts()
        client = self.base.client_kwargs()
        self.params: dict[str, str] = client.get("default_query", {})
        self.headers: dict[str, str] = client.get("default_headers", {})  # Basic auth from user:password@
        key = os.environ.get(s.get("api_key_env", "OPENAI_API_KEY"))
        if key and not self.headers:
            self.headers["Authorization"] = f"Bearer {key}"  # read from env, never written to records
        self.secrets = self.base.secrets() + ([key] if key else [])

    def _load_prompts(self) -> list[Any] | None:
        path = self.s.get("prompts_file")
        if not path:
            return None
        prompts = []
        for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if "messages" not in row and "prompt" not in row:
                raise ValueError(f"{path}:{i}: each line needs 'prompt' (string) or 'messages' (chat list)")
            prompts.append(row.get("messages") or row["prompt"])
        if not prompts:
            raise ValueError(f"{path}: no prompts")
        return prompts

    def points(self) -> list[dict[str, Any]]:
        rates = self.s.get("rates") or [None]
        return [{"concurrency": c, "rate": r, "input_tokens": self.s.get("input_tokens", 128),
                 "output_tokens": self.s.get("output_tokens", 64)} for c in self.cfg.points for r in rates]

    def setup(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"base_url": self.base.public, "served_model": self.s.get("model"), "endpoint": self.url,
                "prompts_file": self.s.get("prompts_file"), "slo": self.slo, "extra_body": self.s.get("extra_body")}

    def _payload(self, i: int, point: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        if self.prompts:
            item = self.prompts[i % len(self.prompts)]
        else:
            item = " ".join(rng.choice(_WORDS) for _ in range(point["input_tokens"]))
        body: dict[str, Any] = {"model": self.s.get("model", "default"), "stream": True,
                                "max_tokens": point["output_tokens"], "temperature": self.s.get("temperature", 0.0),
                                "stream_options": {"include_usage": True}}
        if self.s.get("continuous_usage_stats"):
            body["stream_options"]["continuous_usage_stats"] = True
        if self.chat:
            body["messages"] = item if isinstance(item, list) else [{"role": "user", "content": item}]
        else:
            body["prompt"] = item if isinstance(item, str) else item[-1]["content"]
        body.update(self.s.get("extra_body", {}))
        return body

    async def _run_point(self, point: dict[str, Any]) -> tuple[list[RequestResult], float, LoopLagMonitor]:
        conc, rate = point["concurrency"], point["rate"]
        n = int(self.s.get("requests_per_point", max(8, 4 * conc)))
        rng = random.Random(self.cfg.seed)
        limits = httpx.Limits(max_connections=conc + 4, max_keepalive_connections=conc + 4)
        timeout = httpx.Timeout(float(self.s.get("timeout_s", 600.0)))
        async with httpx.AsyncClient(limits=limits, timeout=timeout, params=self.params) as client:
            sem = asyncio.Semaphore(conc)

            async def one(i: int) -> RequestResult:
                async with sem:
                    return await stream_request(client, self.url, self._payload(i, point, rng), self.chat, self.headers)

            warm = self.cfg.warmup_steps
            if warm:
                await asyncio.gather(*(one(-1 - i) for i in range(warm)))
            monitor = LoopLagMonitor()
            monitor.start()
            t0 = time.perf_counter()
            tasks = []
            arrivals = random.Random(self.cfg.seed + 1)
            for i in range(n):
                if rate and i:  # Poisson arrivals: exponential gaps with mean 1 / rate
                    await asyncio.sleep(arrivals.expovariate(rate))
                tasks.append(asyncio.create_task(one(i)))
            results = await asyncio.gather(*tasks)
            wall = time.perf_counter() - t0
            await monitor.stop()
        return list(results), wall, monitor

    def measure(self, point: dict[str, Any], trace_path: Path | None) -> Measurement:
        results, wall, monitor = asyncio.run(self._run_point(point))
        self._scrub_errors(results)
        ok = [r for r in results if r.ok]
        if not ok:
            raise RuntimeError(f"all {len(results)} requests failed; first: {results[0].error}")
        return Measurement([wall], info=self._metrics(results, ok, wall, monitor))

    def _scrub_errors(self, results: list[RequestResult]) -> None:
        """A server or client error may echo the request URL or a header: cut the secrets out."""
        for r in results:
            if r.error:
                r.error = scrub(r.error, self.secrets)

    def _metrics(self, results, ok, wall, monitor) -> dict[str, Any]:
        ms = lambda xs: [x * 1e3 for x in xs]  # noqa: E731
        ttft, e2e = ms([r.ttft_s for r in ok]), ms([r.e2e_s for r in ok])
        tpot = ms([r.tpot_s for r in ok if r.tpot_s is not None])
        itl = ms([g for r in ok for g in r.itl_s])
        out_tokens = sum(r.output_tokens for r in ok)
        m: dict[str, Any] = {"requests": len(results), "completed": len(ok), "failed": len(results) - len(ok),
                             "wall_s": wall, "output_tokens": out_tokens,
                             "output_tokens_per_request": out_tokens / len(ok),
                             "prompt_tokens_per_request": _mean([r.prompt_tokens for r in ok if r.prompt_tokens]),
                             "token_source": sorted({r.token_source for r in ok})}
        for name, xs in (("ttft_ms", ttft), ("tpot_ms", tpot), ("itl_ms", itl), ("e2e_ms", e2e)):
            m[f"{name}_mean"] = _mean(xs)
            for q in (50, 90, 99):
                m[f"{name}_p{q}"] = percentile(xs, q) if xs else None
        m["output_tokens_per_s"] = out_tokens / wall
        m["output_tokens_per_s_per_gpu"] = out_tokens / wall / self.gpus
        m["request_throughput_rps"] = len(ok) / wall
        m["tokens_per_s_per_user"] = 1e3 / m["tpot_ms_p50"] if m["tpot_ms_p50"] else None
        if self.slo:
            good = [r for r in ok if _meets(r, self.slo)]
            m["goodput_rps"] = len(good) / wall
            m["goodput_fraction"] = len(good) / len(results)
        lags = ms(monitor.lags_s)
        m["client_loop_lag_ms_p50"] = percentile(lags, 50) if lags else None
        m["client_loop_lag_ms_p99"] = percentile(lags, 99) if lags else None
        m["client_loop_lag_ms_max"] = max(lags) if lags else None
        m["client_parse_fraction"] = sum(r.parse_s for r in results) / wall
        # The client caps the numbers when its own delays approach what it measures.
        itl_p50 = m["itl_ms_p50"] or m["ttft_ms_p50"]
        m["client_limited"] = bool(lags) and (m["client_loop_lag_ms_p99"] > max(5.0, 0.2 * itl_p50)
                                              or m["client_parse_fraction"] > 0.25)
        m["errors"] = sorted({r.error for r in results if r.error})[:5]
        return m

    def summarise(self, point, step_times_s, work, infos, gpus) -> Outcome:
        m = infos[0]
        denominators = {"gpus": self.gpus, "gpus_note": f"per GPU = divided by serve.gpus = {self.gpus} "
                                                        "(GPUs behind the endpoint, as configured)"}
        defs = dict(DEFINITIONS)
        if not self.slo:
            defs.pop("goodput_rps")
        return Outcome(m, defs, denominators, cost_rates={"output_tokens": m["output_tokens_per_s_per_gpu"]},
                       steps={"warmup_requests": self.cfg.warmup_steps, "measured_requests": m["requests"]})

    def close(self) -> None:
        pass


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _meets(r: RequestResult, slo: dict[str, float]) -> bool:
    checks = {"ttft_ms": (r.ttft_s or 0) * 1e3, "e2e_ms": r.e2e_s * 1e3,
              "tpot_ms": (r.tpot_s or 0) * 1e3}
    return all(checks[k] <= v for k, v in slo.items())
