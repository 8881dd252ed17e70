"""A model of Qwen3-0.6B's shapes (random weights) on the built-in engine, side by side with HF transformers and
llama.cpp (llama-cpp-python, the `bench` extra, for one stream; llama-server with -np STREAMS from
benchmarks/build_llama_server.sh for --streams; each skipped when absent), on the same files and threads.

    python benchmarks/bench_models.py [--threads 2] [--formats bf16 Q8_0 Q4_0] [--new-tokens 32]
                                      [--prompt-len 64] [--prefill-len 512] [--streams 16] [--skip-hf]

The model (28 layers, hidden 1024, 16 query / 8 KV heads of 128, FFN 3072, vocab 151936, tied embeddings) is
written once under --workdir as bf16 safetensors (an HF folder) and as GGUF files whose matrices are Q8_0 and Q4_0
(llama.cpp's names and keys, engine/native/gguf_export.py). Decode counts output tokens after the first
(tokens/s summed over the streams; per user = that / streams); prefill counts fresh prompt tokens per second
(random prompts, so the prefix cache never helps). Every rate is a median of --reps runs after a warm-up.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cli import add_numbers  # noqa: E402
from benchmarks.bench_serve_vs_llama import default_llama_bin  # noqa: E402
from benchmarks.bench_native import hf_decode, hf_prefill, native_prefill, prompts, run_native  # noqa: E402
from engine.native.gguf_export import write_gguf  # noqa: E402
from engine.native.llm_engine import LLMEngine  # noqa: E402
from sweep.provenance import cpu_name  # noqa: E402

QWEN3_0_6B = dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=4096,
                  rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, bos_token_id=None,
                  eos_token_id=None)


def random_state(cfg: dict, seed: int = 0) -> dict[str, torch.Tensor]:
    """HF-named bf16 tensors of a Qwen3 with these shapes (std 0.02 matrices, unit norms)."""
    g = torch.Generator().manual_seed(seed)
    d, f, hd = cfg["hidden_size"], cfg["intermediate_size"], cfg["head_dim"]
    q, kv = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd

    def rnd(*shape):
        return (torch.randn(*shape, generator=g) * 0.02).to(torch.bfloat16)
    ones = lambda n: torch.ones(n, dtype=torch.bfloat16)  # noqa: E731
    t = {"model.embed_tokens.weight": rnd(cfg["vocab_size"], d), "model.norm.weight": ones(d)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t |= {p + "self_attn.q_proj.weight": rnd(q, d), p + "self_attn.k_proj.weight": rnd(kv, d),
              p + "self_attn.v_proj.weight": rnd(kv, d), p + "self_attn.o_proj.weight": rnd(d, q),
              p + "self_attn.q_norm.weight": ones(hd), p + "self_attn.k_norm.weight": ones(hd),
              p + "mlp.gate_proj.weight": rnd(f, d), p + "mlp.up_proj.weight": rnd(f, d),
              p + "mlp.down_proj.weight": rnd(d, f),
              p + "input_layernorm.weight": ones(d), p + "post_attention_layernorm.weight": ones(d)}
    return t


def build_files(workdir: Path, formats: list[str]) -> dict[str, Path]:
    """The HF folder and the GGUF files (written once; later runs reuse them)."""
    from safetensors.torch import load_file, save_file
    from tests.sweep.tiny_llama import write_word_tokenizer
    folder = workdir / "qwen3-0.6b-shape"
    if not (folder / "model.safetensors").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        config = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", **QWEN3_0_6B}
        (folder / "config.json").write_text(json.dumps(config))
        write_word_tokenizer(folder, QWEN3_0_6B["vocab_size"])
        save_file(random_state(QWEN3_0_6B), str(folder / "model.safetensors"))
    files = {"bf16": folder}
    state = None
    for fmt in formats:
        if fmt == "bf16":
            continue
        path = workdir / f"qwen3-0.6b-shape-{fmt}.gguf"
        if not path.is_file():
            state = state or load_file(str(folder / "model.safetensors"))
            tmp = path.with_suffix(".tmp")
            write_gguf(tmp, "qwen3", json.loads((folder / "config.json").read_text()), state, fmt)
            tmp.rename(path)
        files[fmt] = path
    return files


def median_of(fn, reps: int) -> float:
    return statistics.median(fn() for _ in range(reps))


def bench_engine(model: Path, a) -> dict[str, float]:
    eng = LLMEngine(str(model), device="cpu", dtype="bf16", threads=a.threads, kv_cache_gib=a.kv_gib,
                    ignore_eos=True)
    run_native(eng, prompts(2, 16, 7), 4)  # warm-up (and the compiled kernels' first use)
    out = {"decode_1": median_of(lambda: run_native(eng, prompts(1, a.prompt_len, 11), a.new_tokens)["decode_tok_s"],
                                 a.reps),
           "decode_n": median_of(lambda: run_native(eng, prompts(a.streams, a.prompt_len, 12),
                                                    a.new_tokens)["decode_tok_s"], a.reps),
           "prefill": native_prefill(eng, a.prefill_len, a.reps)}
    eng.close()
    del eng
    return out


def bench_hf(folder: Path, a) -> dict[str, float]:
    import transformers
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.bfloat16).eval()
    hf_decode(model, prompts(1, 16, 7), 4)  # warm-up
    out = {"decode_1": median_of(lambda: hf_decode(model, prompts(1, a.prompt_len, 11), a.new_tokens), a.reps),
           "decode_n": median_of(lambda: hf_decode(model, prompts(a.streams, a.prompt_len, 12), a.new_tokens),
                                 a.reps),
           "prefill": hf_prefill(model, a.prefill_len, a.reps)}
    del model
    return out


def bench_llama_cpp(path: Path, a) -> dict[str, float] | None:
    """One stream (llama-cpp-python's Llama runs one sequence), decode and prefill."""
    if (a.llama_bin / "libllama.so").exists():  # the binding links to build_llama_server.sh's library
        os.environ.setdefault("LLAMA_CPP_LIB_PATH", str(a.llama_bin))
    try:
        import llama_cpp
    except (ImportError, OSError):
        return None
    from benchmarks.bench_native import LlamaStream, llama_prefill
    llm = llama_cpp.Llama(str(path), n_ctx=max(a.prefill_len, a.prompt_len + a.new_tokens) + 16, n_batch=2048,
                          n_threads=a.threads, n_threads_batch=a.threads, verbose=False)
    LlamaStream(llm, prompts(1, 16, 7)[0]).step(4)  # warm-up
    out = {"decode_1": median_of(lambda: LlamaStream(llm, prompts(1, a.prompt_len, 11)[0]).step(a.new_tokens - 1),
                                 a.reps),
           "prefill": llama_prefill(llm, a.prefill_len, a.reps)}
    del llm
    gc.collect()
    many = bench_llama_server_streams(path, a)  # the binding runs one sequence; llama-server runs many
    if many is not None:
        out["decode_n"] = many
    return out


def bench_llama_server_streams(path: Path, a) -> float | None:
    """Decode tokens/s summed over --streams concurrent sequences on llama-server (-np streams, continuous
    batching), from the server's own per-request timings: the streams decode together after one joint prompt
    batch, so the sum of their generated tokens over the longest generation time is their joint decode rate."""
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor
    from benchmarks.bench_serve_vs_llama import Server, free_port
    if not (a.llama_bin / "llama-server").exists():
        return None
    port = free_port()
    ctx = a.prompt_len + a.new_tokens + 16
    cmd = [str(a.llama_bin / "llama-server"), "-m", str(path), "--host", "127.0.0.1", "--port", str(port), "-t",
           str(a.threads), "-tb", str(a.threads), "-np", str(a.streams), "-cb", "-c", str(a.streams * ctx), "--no-webui"]

    def one(prompt: list[int], n: int) -> dict:
        body = json.dumps({"prompt": prompt, "n_predict": n, "ignore_eos": True, "temperature": 0.0,
                           "cache_prompt": False}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=3600) as r:
            return json.loads(r.read())["timings"]

    def joint_rate(seed: int) -> float:
        with ThreadPoolExecutor(a.streams) as pool:
            timings = list(pool.map(lambda p: one(p, a.new_tokens), prompts(a.streams, a.prompt_len, seed)))
        return sum(t["predicted_n"] for t in timings) / (max(t["predicted_ms"] for t in timings) / 1e3)

    env = {**os.environ, "LD_LIBRARY_PATH": f"{a.llama_bin}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    with Server("llama-server", cmd, port, env) as server:
        server.wait_ready()
        one(prompts(1, 16, 7)[0], 4)  # warm-up
        seeds = iter(range(100, 100 + a.reps))
        return median_of(lambda: joint_rate(next(seeds)), a.reps)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--formats", nargs="+", default=["bf16", "Q8_0", "Q4_0"])
    add_numbers(ap, new_tokens=32, prompt_len=64, prefill_len=512, streams=16, reps=3, kv_gib=1.0)
    ap.add_argument("--skip-hf", action="store_true")
    ap.add_argument("--llama-bin", type=Path, default=Path(os.environ.get("LLAMA_BIN") or default_llama_bin()),
                    help="folder with llama-server and libllama.so (default: $LLAMA_BIN or build_llama_server.sh's); "
                         "llama-server gives llama.cpp's row for --streams sequences")
    ap.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "harness" / "bench_models")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"CPU: {cpu_name()}; threads {a.threads}; torch {torch.__version__}; bf16 compute for engine and HF",
          flush=True)
    t = time.perf_counter()
    files = build_files(a.workdir, a.formats)
    print(f"model files ready in {time.perf_counter() - t:.0f} s: {', '.join(str(p) for p in files.values())}",
          flush=True)
    rows: list[tuple[str, str, dict[str, float] | None]] = []
    for fmt, path in files.items():
        rows.append((fmt, "engine", bench_engine(path, a)))
        print(rows[-1], flush=True)
        gc.collect()
        if fmt == "bf16" and not a.skip_hf:
            rows.append((fmt, "HF transformers", bench_hf(path, a)))
        elif fmt != "bf16":
            rows.append((fmt, "llama.cpp", bench_llama_cpp(path, a)))
        print(rows[-1], flush=True)
        gc.collect()
    n = a.streams
    print(f"\n| weights | runner | decode 1 stream (tok/s) | decode {n} streams (tok/s, total) | "
          f"prefill {a.prefill_len} (tok/s) |")
    print("|---|---|---|---|---|")
    for fmt, who, r in rows:
        if r is None:
            print(f"| {fmt} | {who} | not installed | | |")
            continue
        many = f"{r['decode_n']:.1f}" if "decode_n" in r else "n/a (one sequence)"
        print(f"| {fmt} | {who} | {r['decode_1']:.1f} | {many} | {r['prefill']:.1f} |")
    by = {(f, w): r for f, w, r in rows if r}
    for fmt in files:
        who = "HF transformers" if (fmt, "HF transformers") in by else "llama.cpp"
        other, mine = by.get((fmt, who)), by.get((fmt, "engine"))
        if other and mine:
            ratios = ", ".join(f"{k} {mine[k] / other[k]:.2f}x" for k in ("decode_1", "decode_n", "prefill")
                               if k in other)
            print(f"{fmt}: engine / {who}: {ratios}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
