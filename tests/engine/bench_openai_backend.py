"""Requests/s of the openai engine against the scripted server answering at once (not a timed test).

    python -m tests.engine.bench_openai_backend [--requests 5000] [--concurrency 32 256]
                                                [--transport httpx aiohttp] [--in-thread]

By default the server runs in its own process, as a real server would; --in-thread runs it in this
process (how most tests use it), where it shares the GIL with the client. CPU time per request is
printed beside the wall-clock rate because the wall clock is noisy on a shared machine.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from engine import ChatRequest, EngineOptions, SamplingParams, create_engine
from engine.openai.clients import aiohttp_available
from tests.support import Reply, ScriptedServer

REPO = Path(__file__).resolve().parents[2]
TEXT = "Adding one gives it: \\boxed{42}."


@contextlib.contextmanager
def server_url(in_thread: bool) -> Iterator[str]:
    if in_thread:
        with ScriptedServer(Reply(text=TEXT)) as server:
            yield server.base_url
        return
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.scripted_server", "--text", TEXT],
                            cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip().rsplit(" ", 1)[-1]  # "serving 'test-model' at URL"
    finally:
        proc.terminate()
        proc.wait(10)


async def measure(url: str, requests: int, concurrency: int, transport: str) -> tuple[float, float]:
    engine = create_engine("openai", EngineOptions(model="test-model", base_urls=[url], max_retries=0,
                                                   http_transport=transport))
    params = SamplingParams(max_tokens=64)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            completion = await engine.chat(ChatRequest(str(i), [{"role": "user", "content": f"Problem {i}"}], params))
            assert completion.finish_reason == "stop", completion.error

    try:
        await asyncio.gather(*(one(i) for i in range(min(requests, 500))))  # warm up: connections, pools
        wall, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(i) for i in range(requests)))
        return requests / (time.perf_counter() - wall), requests / (time.process_time() - cpu)
    finally:
        await engine.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[32, 256])
    ap.add_argument("--transport", nargs="+", default=["httpx", "aiohttp"] if aiohttp_available() else ["httpx"])
    ap.add_argument("--in-thread", action="store_true", help="run the server in this process")
    args = ap.parse_args()
    where = "in-thread" if args.in_thread else "separate process"
    print(f"server: {where}; {args.requests} requests per row")
    print(f"{'transport':>9}  {'concurrency':>11}  {'req/s (wall)':>12}  {'req per CPU-second (client process)':>36}")
    with server_url(args.in_thread) as url:
        for c in args.concurrency:
            for transport in args.transport:
                wall, cpu = asyncio.run(measure(url, args.requests, c, transport))
                print(f"{transport:>9}  {c:>11}  {wall:>12.0f}  {cpu:>36.0f}", flush=True)


if __name__ == "__main__":
    main()
