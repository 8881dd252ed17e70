"""The harness's own overhead: generation records/s through the whole generate stage.

A local scripted OpenAI-compatible server (in its own process, as a real server would be) answers
instantly, so the rate measures the harness (prompt rendering, the openai client, retry
bookkeeping, record writing), not a model. Each configuration is measured `--repeats` times,
interleaved, and the median is printed beside the client's CPU seconds per 1,000 records (less
sensitive than wall time to other load on a shared machine).

    python benchmarks/bench_harness.py [--records 4096] [--concurrency 32 256] [--paths lean sdk]

`--paths lean sdk` sets the current non-streamed hot path (engine/openai/raw.py) beside the openai SDK's
raw post that it replaced, in the same run.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import EngineOptions, SamplingParams, create_engine  # noqa: E402
from engine.openai.clients import ClientFactory  # noqa: E402
from harness.generate import GenerateConfig, run_generation  # noqa: E402
from sweep.provenance import cpu_name  # noqa: E402
from tasks import Item, get_task  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PATHS = ("lean", "sdk")


async def measure(base_url: str, records: int, concurrency: int, root: Path, transport: str = "auto") -> float:
    task = get_task("aime")
    items = [Item(id=f"q{i}", fields={"problem": f"Problem number {i}: compute {i} + 1.", "answer": str(i % 1000)})
             for i in range(records // 8)]
    cfg = GenerateConfig(task=task, data_path=task.demo_data_path, out=root, samples=8,
                         limit=None, sampling=SamplingParams(max_tokens=64), concurrency=concurrency, progress=False)
    engine = create_engine("openai", EngineOptions(model="test-model", base_urls=[base_url], max_retries=0,
                                                   http_transport=transport))
    try:
        start = time.perf_counter()
        result = await run_generation(cfg, engine, items, "test-model")
        elapsed = time.perf_counter() - start
    finally:
        await engine.aclose()
    assert result.errors == 0, result.error_examples
    return result.generated / elapsed


def run_once(base_url: str, records: int, concurrency: int, path: str, root: Path) -> tuple[float, float]:
    """(records/s, client CPU seconds per 1,000 records) for one path."""
    raw_session = getattr(ClientFactory, "raw_session", None)  # absent in a checkout from before the lean path
    if path == "sdk" and raw_session is not None:  # the replaced hot path: every request through the SDK's post
        ClientFactory.raw_session = lambda self, url: None  # type: ignore[method-assign]
    try:
        cpu0 = time.process_time()
        rate = asyncio.run(measure(base_url, records, concurrency, root, "aiohttp"))
        cpu = time.process_time() - cpu0
    finally:
        if raw_session is not None:
            ClientFactory.raw_session = raw_session  # type: ignore[method-assign]
    return rate, cpu / records * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=4096)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=["lean"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.scripted_server", "--text", "Adding one gives it: \\boxed{42}."],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )
    runs: dict[tuple[int, str], list[tuple[float, float]]] = {}
    try:
        base_url = server.stdout.readline().strip().rsplit(" ", 1)[-1]  # "serving 'test-model' at URL"
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(measure(base_url, 512, 64, Path(tmp) / "warm", "aiohttp"))
            n = 0
            for _ in range(args.repeats):
                for c in args.concurrency:
                    for path in args.paths:  # interleaved, so slow phases of other load hit every path
                        n += 1
                        runs.setdefault((c, path), []).append(run_once(base_url, args.records, c, path,
                                                                        Path(tmp) / f"run-{n}"))
    finally:
        server.terminate()
        server.wait()
    print(f"CPU: {cpu_name()}; median of {args.repeats} runs of {args.records} records (goal at 256: >= 2,000/s)")
    print(f"{'concurrency':>12} {'path':>6} {'records/s':>10} {'client CPU s / 1k records':>27}")
    rows = []
    for (c, path), values in runs.items():
        rate = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        rows.append({"concurrency": c, "path": path, "records_per_s": round(rate, 1), "cpu_s_per_1k": round(cpu, 1)})
        print(f"{c:>12} {path:>6} {rate:>10.1f} {cpu:>27.1f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
