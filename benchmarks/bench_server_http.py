"""HTTP vs in-process: the same streaming workload through `harness serve` and straight through the engine.

    python benchmarks/bench_server_http.py --concurrency 64 --requests 128 --input-words 48 --output-tokens 32

Prints output tokens/s for each path, their ratio, and TTFT / TPOT percentiles. The server runs as a
subprocess (as users run it), so the client's event loop does not share the server's interpreter.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cli import add_numbers  # noqa: E402
from engine.native.model_registry import DEFAULT_MODEL  # noqa: E402
from harness.commands.native_flags import add_engine_arguments, engine_fields, engine_flags  # noqa: E402

ENGINE = engine_flags("device", "dtype", "threads", "kv-cache-gib", "max-num-seqs")  # both paths get the same

WORDS = ("time year people way day man thing woman life child world school state family student group country "
         "problem hand part place case week company system program question work number night point home water "
         "room mother area money story fact month book eye job word business issue side kind head house").split()


@dataclass
class Result:
    ttft_s: float | None = None
    e2e_s: float = 0.0
    tokens: int = 0
    error: str | None = None


@dataclass
class Summary:
    label: str
    wall_s: float
    results: list[Result] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU seconds in the measured window, by process

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.results)

    def line(self) -> str:
        ok = [r for r in self.results if r.error is None]
        ttft = sorted(r.ttft_s for r in ok if r.ttft_s is not None)
        tpot = sorted((r.e2e_s - r.ttft_s) / (r.tokens - 1) for r in ok if r.ttft_s is not None and r.tokens > 1)

        def pct(xs: list[float], p: float) -> str:
            return f"{1000 * xs[min(len(xs) - 1, int(p * len(xs)))]:.0f}" if xs else "-"
        return (f"{self.label:<11} {self.tokens / self.wall_s:8.1f} tok/s  wall {self.wall_s:6.1f} s  "
                f"errors {len(self.results) - len(ok)}  TTFT ms p50 {pct(ttft, 0.5)} p90 {pct(ttft, 0.9)} p99 "
                f"{pct(ttft, 0.99)}  TPOT ms p50 {pct(tpot, 0.5)} p90 {pct(tpot, 0.9)} p99 {pct(tpot, 0.99)}  "
                f"CPU s per 1k tokens: " + ", ".join(f"{k} {1000 * v / max(1, self.tokens):.2f}"
                                                     for k, v in self.cpu_s.items()))


def _proc_cpu_s(pid: int) -> float:
    """utime + stime of another process (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prompts(n: int, words: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)) for _ in range(n)]


async def _closed_loop(n: int, concurrency: int, one) -> tuple[list[Result], float]:
    queue = list(range(n))
    results: list[Result] = []

    async def worker() -> None:
        while queue:
            results.append(await one(queue.pop()))
    t0 = time.perf_counter()
    await asyncio.gather(*[worker() for _ in range(concurrency)])
    return results, time.perf_counter() - t0


def run_in_process(args: argparse.Namespace, texts: list[str]) -> Summary:
    from engine.base import ChatRequest, EngineOptions, SamplingParams
    from engine.native.backend import NativeEngine
    engine = NativeEngine.from_options(_options(args, EngineOptions))
    params = SamplingParams(max_tokens=args.output_tokens, temperature=0.0)

    async def one_text(i: int, text: str) -> Result:
        t0, res = time.perf_counter(), Result()
        async for d in engine.stream(ChatRequest(f"b{i}", [{"role": "user", "content": text}], params)):
            if (d.text or d.token_count) and res.ttft_s is None:
                res.ttft_s = time.perf_counter() - t0
            if d.final is not None:
                res.tokens = d.final.completion_tokens
                res.error = d.final.error
        res.e2e_s = time.perf_counter() - t0
        return res

    async def main() -> Summary:
        await _closed_loop(min(args.concurrency, len(texts)), args.concurrency, lambda i: one_text(i, texts[i]))
        cpu0 = time.process_time()  # all threads: the engine thread and the client coroutines
        results, wall = await _closed_loop(len(texts), args.concurrency, lambda i: one_text(i, texts[i]))
        cpu = time.process_time() - cpu0
        await engine.aclose()
        return Summary("in-process", wall, results, {"engine+client": cpu})
    return asyncio.run(main())


def run_http(args: argparse.Namespace, texts: list[str]) -> Summary:
    import httpx
    cmd = [sys.executable, "-m", "harness", "serve", "--port", "0", "--log-level", "warning",
           "--max-num-seqs", str(args.max_num_seqs), "--kv-cache-gib", str(args.kv_cache_gib)]
    for flag in ("model", "threads", "device", "dtype"):
        if getattr(args, flag):
            cmd += [f"--{flag}", str(getattr(args, flag))]
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(cmd, cwd=root, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        url = None
        while url is None:
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError("serve exited before announcing its URL")
            m = re.search(r"on (http://\S+/v1)", line)
            url = m.group(1) if m else None

        async def one(client: httpx.AsyncClient, text: str) -> Result:
            t0, res = time.perf_counter(), Result()
            body = {"model": args.model, "messages": [{"role": "user", "content": text}], "stream": True,
                    "max_tokens": args.output_tokens, "temperature": 0, "stream_options": {"include_usage": True}}
            async with client.stream("POST", url + "/chat/completions", json=body) as r:
                if r.status_code != 200:
                    res.error = f"HTTP {r.status_code}"
                    return res
                async for line in r.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    ev = json.loads(line[6:])
                    if ev.get("usage"):
                        res.tokens = ev["usage"]["completion_tokens"]
                    if ev.get("error"):
                        res.error = str(ev["error"])
                    if ev.get("choices") and ev["choices"][0].get("delta", {}).get("content") and res.ttft_s is None:
                        res.ttft_s = time.perf_counter() - t0
            res.e2e_s = time.perf_counter() - t0
            return res

        async def main() -> Summary:
            limits = httpx.Limits(max_connections=args.concurrency + 8)
            async with httpx.AsyncClient(timeout=600, limits=limits) as client:
                await _closed_loop(min(args.concurrency, len(texts)), args.concurrency, lambda i: one(client, texts[i]))
                server0, client0 = _proc_cpu_s(proc.pid), time.process_time()
                results, wall = await _closed_loop(len(texts), args.concurrency, lambda i: one(client, texts[i]))
                cpu = {"server": _proc_cpu_s(proc.pid) - server0, "client": time.process_time() - client0}
            return Summary("http", wall, results, cpu)
        return asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(30)


def _options(args: argparse.Namespace, cls):
    return cls(model=args.model, **engine_fields(args, ENGINE))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=DEFAULT_MODEL)
    add_numbers(p, concurrency=64, requests=128, input_words=48, output_tokens=32)
    add_engine_arguments(p, ENGINE, defaults={"max-num-seqs": (64, "64"), "kv-cache-gib": (0.5, "0.5")})
    p.add_argument("--repeats", type=int, default=1, help="alternate the two paths this many times; medians")
    p.add_argument("--order", default="in-process,http", help="which path runs first in each repeat")
    args = p.parse_args(argv)
    texts = prompts(args.requests, args.input_words)
    runs: dict[str, list[Summary]] = {"in-process": [], "http": []}
    for _ in range(args.repeats):
        for label in args.order.split(","):
            s = run_in_process(args, texts) if label == "in-process" else run_http(args, texts)
            runs[s.label].append(s)
            print(s.line(), flush=True)
    rate = {k: statistics.median(s.tokens / s.wall_s for s in v) for k, v in runs.items()}
    print(f"http / in-process output tokens/s (median of {args.repeats}): {rate['http'] / rate['in-process']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
