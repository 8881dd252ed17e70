"""`harness serve` against llama.cpp's `llama-server` under load: same GGUF, same threads, same client and requests.

    bash benchmarks/build_llama_server.sh          # once: builds llama-server (prints its folder)
    python benchmarks/bench_serve_vs_llama.py      # about 10 minutes on an idle 2-core machine

For each level of concurrent clients (default 1, 4, 16, 64) both servers are started fresh with as many
slots as clients (`llama-server -np C -cb`, `harness serve --max-num-seqs C`) and the same KV memory, and
driven one after the other (the order alternating by level) by the serving sweep's own client
(sweep/serve.py, closed loop) with `max(C, 4)` requests: /v1/completions with token-id prompts of 128-2,048
tokens (lengths spaced evenly in log space, the same list for both servers; token ids drawn fresh for every
request, so neither server's prefix cache helps), 256 output tokens with `ignore_eos`, greedy. Printed: output
tokens/s, TTFT and TPOT p50/p90/p99 per server and level, with the ratios, as a markdown table, and the
machine's load average beside each level.

Also the single stream end to end through each side's public Python API: `LLM.generate` (engine/native/llm.py)
against llama-cpp-python's `Llama.generate` on the same GGUF (fresh random short prompts, the two taking turns,
greedy, end of sequence ignored on both sides so each makes exactly --single-tokens; time from the call to
the last token, prefill included). The binding may be linked to the libllama.so built by
the script above (`--llama-bin` sets LLAMA_CPP_LIB_PATH); without llama_cpp the single stream is skipped.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.cli import add_numbers  # noqa: E402
from engine.native.kv_quant import row_bytes  # noqa: E402
from engine.native.model_registry import DEFAULT_MODEL  # noqa: E402
from sweep.provenance import cpu_name  # noqa: E402

KV_DTYPE_BYTES = 2  # both servers keep K and V in 16-bit floats by default (f16 / bf16)


def default_llama_bin() -> Path:
    """Where benchmarks/build_llama_server.sh links its binaries."""
    cache = os.environ.get("LLAMA_CACHE_DIR") or str(
        Path(os.environ.get("HARNESS_CACHE_DIR") or Path.home() / ".cache" / "harness") / "llama.cpp")
    return Path(cache) / "bin"


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gguf_facts(path: Path) -> dict[str, int]:
    """Vocabulary size and the KV bytes per token of the GGUF (to give both servers the same KV memory)."""
    from gguf import GGUFReader
    r = GGUFReader(str(path))
    arch = bytes(r.fields["general.architecture"].parts[-1]).decode()

    def num(key: str) -> int:
        f = r.fields[f"{arch}.{key}"]
        return int(f.parts[f.data[0]][0])
    heads, kv_heads, layers = num("attention.head_count"), num("attention.head_count_kv"), num("block_count")
    head_dim = num("embedding_length") // heads
    return {"vocab": len(r.fields["tokenizer.ggml.tokens"].data), "layers": layers, "head_dim": head_dim,
            "kv_bytes_per_token": layers * 2 * kv_heads * head_dim * KV_DTYPE_BYTES}


def prompt_lengths(n: int, lo: int, hi: int) -> list[int]:
    """n lengths spaced evenly in log space from lo to hi, shuffled with a fixed seed (same for both servers)."""
    if n == 1:
        return [round(math.sqrt(lo * hi))]
    out = [round(lo * (hi / lo) ** (i / (n - 1))) for i in range(n)]
    random.Random(n).shuffle(out)
    return out


def write_prompts(path: Path, lengths: list[int], vocab: int, rng: random.Random) -> Path:
    # ids from 1,000 up skip the special and byte tokens at the start of the vocabulary
    rows = [json.dumps({"prompt": [rng.randrange(1000, vocab) for _ in range(n)]}) for n in lengths]
    path.write_text("\n".join(rows) + "\n")
    return path


class Server:
    """One server process on a free port; stopped on exit."""

    def __init__(self, name: str, cmd: list[str], port: int, env: dict[str, str] | None = None):
        self.name, self.port = name, port
        self.log = tempfile.NamedTemporaryFile(prefix=f"{name}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_ready(self, timeout_s: float = 300.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}; log: {self.log.name}\n"
                                   + Path(self.log.name).read_text()[-2000:])
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{self.name} did not come up in {timeout_s:.0f} s; log: {self.log.name}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def start(kind: str, a, level: int, facts: dict[str, int]) -> Server:
    port = free_port()
    ctx_per_slot = a.max_prompt + a.output_tokens + 16
    if kind == "llama-server":
        cmd = [str(a.llama_bin / "llama-server"), "-m", str(a.gguf), "--host", "127.0.0.1", "--port", str(port),
               "-t", str(a.threads), "-tb", str(a.threads), "-np", str(level), "-cb", "-c", str(level * ctx_per_slot),
               "--no-webui"]
        if a.kv_cache == "q8":  # llama.cpp's 8-bit K/V blocks (Q8_0); a quantised V cache needs flash attention
            cmd += ["-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"]
        env = {**os.environ, "LD_LIBRARY_PATH": f"{a.llama_bin}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
        return Server(kind, cmd, port, env)
    per_token = facts["kv_bytes_per_token"]
    if a.kv_cache == "q8":  # 8-bit rows: head_dim codes + head_dim/32 float32 scales instead of 2 bytes a value
        per_token = per_token * row_bytes(facts["head_dim"]) // (2 * facts["head_dim"])
    gib = level * ctx_per_slot * per_token / 2 ** 30  # room for as many tokens as llama-server's -c
    cmd = [sys.executable, "-m", "harness", "serve", "--model", a.model, "--port", str(port), "--threads",
           str(a.threads), "--max-num-seqs", str(level), "--kv-cache-gib", f"{gib * 1.05:.3f}", "--log-level", "warning"]
    if a.kv_cache == "q8":
        cmd += ["--kv-cache-dtype", "int8"]
    return Server(kind, cmd, port)


def drive(server: Server, a, level: int, n: int, prompts: Path, output_tokens: int, seed: int) -> dict[str, Any]:
    """One closed-loop point through the serving sweep's client; its metrics under vLLM's names."""
    from sweep.config import SweepConfig
    from sweep.serve import ServeSweep
    cfg = SweepConfig(tag=f"{server.name}-c{level}", kind="serve", points=[level], warmup_steps=0, seed=seed,
                      serve={"base_url": server.base_url, "model": a.served_name, "endpoint": "completions",
                             "output_tokens": output_tokens, "prompts_file": str(prompts), "requests_per_point": n,
                             "extra_body": {"ignore_eos": True}, "timeout_s": 3600.0})
    sweep = ServeSweep(cfg)
    return sweep.measure(sweep.point(level, None), None).info


def serve_levels(a, facts: dict[str, int], work: Path) -> list[dict[str, Any]]:
    rows = []
    for li, level in enumerate(a.levels):
        n = max(level, a.min_requests)
        lengths = prompt_lengths(n, a.min_prompt, a.max_prompt)
        order = [k for k in (SERVERS if li % 2 == 0 else SERVERS[::-1]) if k in a.servers]
        row: dict[str, Any] = {"level": level, "requests": n, "prompt_tokens": sum(lengths)}
        for kind in order:
            rng = random.Random(hash((a.seed, kind, level)) & 0xFFFFFFFF)  # fresh ids per server and level
            with start(kind, a, level, facts) as server:
                server.wait_ready()
                warm = write_prompts(work / f"warm-{li}-{kind[0]}.jsonl", [64] * min(level, 2), facts["vocab"], rng)
                drive(server, a, min(level, 2), min(level, 2), warm, 8, a.seed)  # first-request costs, not measured
                prompts = write_prompts(work / f"c{level}-{kind[0]}.jsonl", lengths, facts["vocab"], rng)
                before = load()
                m = drive(server, a, level, n, prompts, a.output_tokens, a.seed)
            row[kind] = {"load": f"{before} -> {load()}", **{k: m.get(k) for k in KEYS}}
            print(f"  c={level:<3} {kind:<13} {m['output_throughput']:7.1f} out tok/s  TTFT p50 "
                  f"{m['p50_ttft_ms']:.0f} ms  TPOT p50 {m['p50_tpot_ms']:.1f} ms  failed {m['failed']}  "
                  f"tokens/request {m['output_tokens_per_request']:.0f}  load {row[kind]['load']}", flush=True)
        rows.append(row)
    return rows


SERVERS = ("harness serve", "llama-server")
KEYS = ("output_throughput", "p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "p50_tpot_ms", "p90_tpot_ms", "p99_tpot_ms",
        "median_tpot_ms", "failed", "completed", "output_tokens_per_request", "duration", "errors")


def single_stream(a, facts: dict[str, int]) -> dict[str, Any] | None:
    """Tokens/s of one greedy stream, end to end through each public API, fresh random prompts, taking turns."""
    if a.llama_bin and (a.llama_bin / "libllama.so").exists():
        os.environ.setdefault("LLAMA_CPP_LIB_PATH", str(a.llama_bin))
    try:
        import llama_cpp
    except (ImportError, OSError) as exc:
        print(f"single stream skipped: llama_cpp does not import ({exc})")
        return None
    from engine.base import SamplingParams
    from engine.native.llm import LLM
    llm = LLM(model=a.model, threads=a.threads, ignore_eos=True)  # both sides make exactly --single-tokens
    ref = llama_cpp.Llama(str(a.gguf), n_ctx=a.single_prompt + a.single_tokens + 16, n_threads=a.threads,
                          n_threads_batch=a.threads, verbose=False)
    rng = random.Random(a.seed + 7)

    def prompt() -> list[int]:
        return [rng.randrange(1000, facts["vocab"]) for _ in range(a.single_prompt)]

    def engine_run() -> tuple[int, float]:
        t = time.perf_counter()
        out = llm.generate([prompt()], SamplingParams(max_tokens=a.single_tokens, temperature=0.0))
        return len(out[0].token_ids), time.perf_counter() - t

    def llama_run(tokens: int) -> float:
        t = time.perf_counter()
        for i, _ in enumerate(ref.generate(prompt(), temp=0.0, reset=True)):
            if i + 1 >= tokens:
                break
        return time.perf_counter() - t

    engine_run(), llama_run(8)  # warm-up
    rates: dict[str, list[float]] = {"engine": [], "llama.cpp": []}
    before = load()
    for r in range(a.single_reps):  # who runs first alternates
        for side in (("engine", "llama.cpp") if r % 2 == 0 else ("llama.cpp", "engine")):
            if side == "engine":
                tokens, dt = engine_run()
                rates["engine"].append(tokens / dt)
            else:
                rates["llama.cpp"].append(a.single_tokens / llama_run(a.single_tokens))
    med = {k: statistics.median(v) for k, v in rates.items()}
    return {"engine": med["engine"], "llama.cpp": med["llama.cpp"], "ratio": med["engine"] / med["llama.cpp"],
            "runs": rates, "load": f"{before} -> {load()}"}


def fmt_ratio(x: float | None, y: float | None) -> str:
    return f"{x / y:.2f}x" if x and y else "-"


def table(rows: list[dict[str, Any]], single: dict[str, Any] | None, a) -> str:
    lines = ["| clients | server | output tok/s | TTFT ms p50 / p90 / p99 | TPOT ms p50 / p90 / p99 | failed | load avg (1/5/15 min) |",
             "|---:|---|---:|---|---|---:|---|"]
    for row in rows:
        for kind in a.servers:
            m = row[kind]
            lines.append(f"| {row['level']} | {kind} | {m['output_throughput']:.1f} | {m['p50_ttft_ms']:.0f} / "
                         f"{m['p90_ttft_ms']:.0f} / {m['p99_ttft_ms']:.0f} | {m['p50_tpot_ms']:.1f} / "
                         f"{m['p90_tpot_ms']:.1f} / {m['p99_tpot_ms']:.1f} | {m['failed']} | {m['load']} |")
        if len(a.servers) < 2:
            continue
        h, ll = row["harness serve"], row["llama-server"]
        lines.append(f"| {row['level']} | **ratio** (harness / llama) | **{fmt_ratio(h['output_throughput'], ll['output_throughput'])}** "
                     f"| {fmt_ratio(h['p50_ttft_ms'], ll['p50_ttft_ms'])} / {fmt_ratio(h['p90_ttft_ms'], ll['p90_ttft_ms'])} / "
                     f"{fmt_ratio(h['p99_ttft_ms'], ll['p99_ttft_ms'])} | {fmt_ratio(h['p50_tpot_ms'], ll['p50_tpot_ms'])} / "
                     f"{fmt_ratio(h['p90_tpot_ms'], ll['p90_tpot_ms'])} / {fmt_ratio(h['p99_tpot_ms'], ll['p99_tpot_ms'])} | | |")
    out = "\n".join(lines)
    checks = []
    for row in rows if len(a.servers) == 2 else []:
        h, ll = row["harness serve"], row["llama-server"]
        if row["level"] in (16, 64):
            r = h["output_throughput"] / ll["output_throughput"]
            checks.append(f"output tok/s at {row['level']} clients: {r:.2f}x llama-server (target >= 2x): "
                          f"{'met' if r >= 2 else 'NOT met'}")
        if row["level"] == 16:
            ok = h["median_tpot_ms"] <= ll["median_tpot_ms"]
            checks.append(f"median TPOT at 16 clients: {h['median_tpot_ms']:.1f} vs {ll['median_tpot_ms']:.1f} ms "
                          f"(target <=): {'met' if ok else 'NOT met'}")
    if single:
        out += (f"\n\nSingle stream, end to end (`LLM.generate` vs llama-cpp-python `Llama.generate`, {a.single_prompt}"
                f"-token fresh random prompts, {a.single_tokens} new tokens, median of {a.single_reps}): engine "
                f"{single['engine']:.1f} tok/s, llama.cpp {single['llama.cpp']:.1f} tok/s, **{single['ratio']:.2f}x** "
                f"(load {single['load']})")
        checks.append(f"single stream: {single['ratio']:.2f}x llama.cpp (target >= 1.2x): "
                      f"{'met' if single['ratio'] >= 1.2 else 'NOT met'}")
    return out + "\n\n" + "\n".join(f"- {c}" for c in checks)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=DEFAULT_MODEL, help="registry name or GGUF path (default: %(default)s)")
    p.add_argument("--llama-bin", type=Path, default=Path(os.environ.get("LLAMA_BIN") or default_llama_bin()),
                   help="folder with llama-server and libllama.so (default: $LLAMA_BIN or build_llama_server.sh's)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--levels", default="1,4,16,64", help="concurrent clients per point (default: %(default)s)")
    p.add_argument("--min-requests", type=int, default=4, help="requests per level: max(clients, this)")
    add_numbers(p, min_prompt=128, max_prompt=2048, output_tokens=256)
    p.add_argument("--single-prompt", type=int, default=32, help="single stream: prompt tokens")
    p.add_argument("--single-tokens", type=int, default=128, help="single stream: new tokens")
    p.add_argument("--single-reps", type=int, default=5)
    p.add_argument("--servers", default="harness,llama", help="which servers to run (default: %(default)s)")
    p.add_argument("--kv-cache", choices=("f16", "q8"), default="f16",
                   help="K/V precision on both sides: 16-bit (default), or 8-bit (llama-server -ctk/-ctv q8_0 with "
                        "flash attention; harness serve --kv-cache-dtype int8)")
    p.add_argument("--skip-single", action="store_true")
    p.add_argument("--skip-serve", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write every number here")
    a = p.parse_args()
    a.levels = [int(x) for x in a.levels.split(",")]
    names = {"harness": "harness serve", "llama": "llama-server"}
    unknown = set(a.servers.split(",")) - set(names)
    if unknown:
        p.error(f"--servers: unknown {sorted(unknown)}; choose from harness, llama")
    a.servers = [names[k] for k in ("harness", "llama") if k in a.servers.split(",")]
    from engine.native.model_registry import resolve_model
    resolved = resolve_model(a.model)
    a.gguf, a.served_name = Path(resolved.path), a.model
    if not a.skip_serve and "llama-server" in a.servers and not (a.llama_bin / "llama-server").exists():
        print(f"no llama-server in {a.llama_bin}: run `bash benchmarks/build_llama_server.sh` or pass --llama-bin")
        return 2
    facts = gguf_facts(a.gguf)
    print(f"CPU: {cpu_name()} ({os.cpu_count()} cores); {a.gguf.name}; threads {a.threads}; K/V {a.kv_cache}; "
          f"load avg {load()}",
          flush=True)
    single = None if a.skip_single else single_stream(a, facts)
    if single:
        print(f"  single stream: engine {single['engine']:.1f}, llama.cpp {single['llama.cpp']:.1f} tok/s "
              f"({single['ratio']:.2f}x), load {single['load']}", flush=True)
    rows: list[dict[str, Any]] = []
    if not a.skip_serve:
        with tempfile.TemporaryDirectory() as tmp:
            rows = serve_levels(a, facts, Path(tmp))
    print()
    print(table(rows, single, a))
    if a.json:
        a.json.write_text(json.dumps({"cpu": cpu_name(), "threads": a.threads, "levels": rows, "single": single},
                                     indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
