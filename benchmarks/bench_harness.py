"""The harness's own overhead: generation records/s through the whole generate stage.

A local scripted OpenAI-compatible server (in its own process, as a real server would be) answers
instantly, so the rate measures the harness (prompt rendering, the openai client, retry
bookkeeping, record writing), not a model.

    python benchmarks/bench_harness.py [--records 4096] [--concurrency 256]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import EngineOptions, SamplingParams, create_engine  # noqa: E402
from harness.generate import GenerateConfig, run_generation  # noqa: E402
from tasks import Item, get_task  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


async def measure(base_url: str, records: int, concurrency: int, root: Path) -> float:
    task = get_task("aime")
    items = [Item(id=f"q{i}", fields={"problem": f"Problem number {i}: compute {i} + 1.", "answer": str(i % 1000)})
             for i in range(records // 8)]
    cfg = GenerateConfig(task=task, data_path=task.demo_data_path, out=root / f"run-{concurrency}", samples=8,
                         limit=None, sampling=SamplingParams(max_tokens=64), concurrency=concurrency, progress=False)
    engine = create_engine("openai", EngineOptions(model="test-model", base_urls=[base_url], max_retries=0))
    try:
        start = time.perf_counter()
        result = await run_generation(cfg, engine, items, "test-model")
        elapsed = time.perf_counter() - start
    finally:
        await engine.aclose()
    assert result.errors == 0, result.error_examples
    return result.generated / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=4096)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 256])
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.scripted_server", "--text", "Adding one gives it: \\boxed{42}."],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )
    rows = []
    try:
        base_url = server.stdout.readline().strip().rsplit(" ", 1)[-1]  # "serving 'test-model' at URL"
        with tempfile.TemporaryDirectory() as tmp:
            for c in args.concurrency:
                rate = asyncio.run(measure(base_url, args.records, c, Path(tmp)))
                rows.append({"concurrency": c, "records_per_s": round(rate, 1)})
    finally:
        server.terminate()
        server.wait()
    print(f"{'concurrency':>12} {'records/s':>10}  (goal at 256: >= 500/s)")
    for r in rows:
        print(f"{r['concurrency']:>12} {r['records_per_s']:>10}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
