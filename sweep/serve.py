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

from engine.openai.endpoints import scrub, split_base_url
from sweep.config import SweepConfig
from sweep.cost_tiers import tier_prices
from sweep.runner import Measurement, Outcome
from sweep.serve_client import LoopLagMonitor, RequestResult, stream_request
from sweep.serve_metrics import DEFINITIONS, serve_metrics

SERVE_KEYS = {
    "base_url", "model", "endpoint", "input_tokens", "output_tokens", "prompts_file", "requests_per_point",
    "rates", "slo", "extra_body", "api_key_env", "timeout_s", "gpus", "temperature", "continuous_usage_stats",
    "gpu_type", "tier_prices",
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


def _token_ids(prompt: Any) -> bool:
    return isinstance(prompt, list) and bool(prompt) and all(isinstance(t, int) for t in prompt)


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
        bad = set(self.slo) - {"ttft_ms", "tpot_ms", "e2e_ms", "e2el_ms"}
        if bad:
            raise ValueError(f"{cfg.path}: unknown serve.slo key(s) {sorted(bad)}; valid: ttft_ms, tpot_ms, e2el_ms")
        tiers = tier_prices(s.get("gpu_type"), s.get("tier_prices"))
        self.prices, self.prices_source = tiers if tiers else (None, None)
        self.only: list[dict[str, Any]] | None = None  # the SLA search measures one probe point at a time
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
                raise ValueError(f"{path}:{i}: each line needs 'prompt' (string or token ids) or 'messages' (chat list)")
            if _token_ids(row.get("prompt")) and self.chat:
                raise ValueError(f"{path}:{i}: a token-id prompt needs serve.endpoint = 'completions'")
            prompts.append(row.get("messages") or row["prompt"])
        if not prompts:
            raise ValueError(f"{path}: no prompts")
        return prompts

    def points(self) -> list[dict[str, Any]]:
        if self.only is not None:
            return self.only
        rates = self.s.get("rates") or [None]
        return [self.point(c, r) for c in self.cfg.points for r in rates]

    def point(self, concurrency: int, rate: float | None) -> dict[str, Any]:
        return {"concurrency": concurrency, "rate": rate, "input_tokens": self.s.get("input_tokens", 128),
                "output_tokens": self.s.get("output_tokens", 64)}

    def setup(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"base_url": self.base.public, "served_model": self.s.get("model"), "endpoint": self.url,
                "prompts_file": self.s.get("prompts_file"), "slo": self.slo, "extra_body": self.s.get("extra_body"),
                "gpu_type": self.s.get("gpu_type"), "tier_prices": self.prices, "tier_prices_source": self.prices_source}

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
        elif isinstance(item, str) or _token_ids(item):  # token ids: exact prompt lengths on any server
            body["prompt"] = item
        else:
            body["prompt"] = item[-1]["content"]
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
        if not any(r.ok for r in results):
            raise RuntimeError(f"all {len(results)} requests failed; first: {results[0].error}")
        return Measurement([wall], info=serve_metrics(results, wall, monitor, self.gpus, self.slo, self.prices))

    def _scrub_errors(self, results: list[RequestResult]) -> None:
        """A server or client error may echo the request URL or a header: cut the secrets out."""
        for r in results:
            if r.error:
                r.error = scrub(r.error, self.secrets)

    def summarise(self, point, step_times_s, work, infos, gpus) -> Outcome:
        m = infos[0]
        denominators = {"gpus": self.gpus, "gpus_note": f"per GPU = divided by serve.gpus = {self.gpus} "
                                                        "(GPUs behind the endpoint, as configured)"}
        defs = dict(DEFINITIONS)
        if not self.slo:
            defs.pop("request_goodput")
        if self.prices:
            defs["cost_tiers"] = (f"cost<tier> = $/GPU-hour / (tput_per_gpu x 3600 / 1e6), $ per million tokens "
                                  f"(Output: output_tput_per_gpu); tiers h/n/r = {self.prices} ({self.prices_source})")
        return Outcome(m, defs, denominators, cost_rates={"output_tokens": m["output_tput_per_gpu"]},
                       steps={"warmup_requests": self.cfg.warmup_steps, "measured_requests": m["requests"]})

    def close(self) -> None:
        pass

