"""Built-in engine vs HF transformers `generate`, side by side in one run (same model file, dtype, threads).

    python benchmarks/bench_native.py [--dtype bf16|fp32] [--threads 2] [--quick] [--hf-weights packed dense]

Decode rates count output tokens after the first (prefill excluded); tokens/s/user = 1 / time per output token.
HF runs twice by default: the GGUF as transformers loads it (packed) and the same model dequantised (dense).
"""
from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.base import SamplingParams  # noqa: E402
from engine.native.llm_engine import LLMEngine  # noqa: E402
from engine.native.model_registry import resolve_model  # noqa: E402

NOTES_BANDWIDTH_GBS = 45.0  # measured memory bandwidth of the 2-core development machine


def prompts(n: int, length: int, seed: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    # Token ids drawn from the ordinary-text range; distinct prompts so the prefix cache never helps.
    return [[1] + torch.randint(200, 40000, (length - 1,), generator=g).tolist() for _ in range(n)]


def run_native(eng: LLMEngine, batch: list[list[int]], new_tokens: int) -> dict:
    """Run a batch to completion; time steps that only decode (no prefill tokens) separately."""
    for i, p in enumerate(batch):
        eng.add_request(p, SamplingParams(max_tokens=new_tokens), f"b{time.perf_counter_ns()}-{i}")
    t0 = time.perf_counter()
    decode_s = decode_tokens = 0
    first = None
    while eng.has_unfinished():
        t = time.perf_counter()
        st = eng.step().stats
        dt = time.perf_counter() - t
        if st.num_prefill_tokens == 0 and st.num_decode_tokens:
            decode_s += dt
            decode_tokens += st.num_decode_tokens
        elif first is None and st.num_decode_tokens == 0:
            first = time.perf_counter() - t0
    return {"decode_tok_s": decode_tokens / decode_s, "total_s": time.perf_counter() - t0, "ttft_s": first}


def native_prefill(eng: LLMEngine, length: int, reps: int = 3) -> float:
    times = []
    for r in range(reps):
        eng.add_request(prompts(1, length, 1000 + r)[0], SamplingParams(max_tokens=1), f"pf{r}")
        t = time.perf_counter()
        while eng.has_unfinished():
            eng.step()
        times.append(time.perf_counter() - t)
    return length / statistics.median(times)


def hf_decode(model, batch: list[list[int]], new_tokens: int) -> float:
    ids = torch.tensor(batch)
    kw = dict(attention_mask=torch.ones_like(ids), do_sample=False, pad_token_id=2)
    with torch.inference_mode():
        t = time.perf_counter()
        model.generate(ids, max_new_tokens=1, min_new_tokens=1, **kw)
        prefill_s = time.perf_counter() - t
        t = time.perf_counter()
        model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, **kw)
        total_s = time.perf_counter() - t
    return len(batch) * (new_tokens - 1) / (total_s - prefill_s)


def hf_prefill(model, length: int, reps: int = 3) -> float:
    times = []
    with torch.inference_mode():
        for r in range(reps):
            ids = torch.tensor(prompts(1, length, 1000 + r))
            t = time.perf_counter()
            model(ids, use_cache=False)
            times.append(time.perf_counter() - t)
    return length / statistics.median(times)


def single_row_weight_bytes(model) -> int:
    """Bytes of weights a one-row decode step reads: each layer matrix in the form used at one row (4-bit codes
    when the engine has them), norms, and the logits head (its fp16 copy when present). The embedding lookup
    reads one row, so it is left out."""
    total = 0
    for layer in model.layers:
        for name, p in layer.named_parameters():
            q = getattr(layer, "int4", {}).get(name)
            total += q.nbytes() if q is not None else p.numel() * p.element_size()
    head = getattr(model, "lm_head_fp16", None)
    head = model.lm_head if head is None else head
    return total + head.numel() * head.element_size() + model.norm.numel() * model.norm.element_size()


def hf_model(variant: str, dtype: torch.dtype):
    """HF LlamaForCausalLM on the same GGUF file. "packed": as transformers loads it (this transformers keeps
    the Q4_1 matrices packed and computes in float32 kernels); "dense": every matrix dequantised to `dtype`
    (the form older transformers releases loaded, and what HF runs for a bf16 checkpoint)."""
    import transformers
    path = resolve_model("smollm2-135m").path
    if variant == "packed":
        return transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                                 dtype=dtype).eval()
    from engine.native.gguf_weights import read_gguf
    from engine.native.int4_weights import SUFFIXES
    config = transformers.AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)
    model = transformers.LlamaForCausalLM(config)
    tensors = {k: v for k, v in read_gguf(path).tensors.items() if not k.endswith(SUFFIXES)}
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    if unexpected or set(missing) - {"lm_head.weight"}:
        raise RuntimeError(f"HF dense model: missing {missing}, unexpected {unexpected}")
    model.lm_head.weight = model.model.embed_tokens.weight  # tied, as in the GGUF
    return model.to(dtype).eval()


def measured_bandwidth_gbs() -> float:
    a = torch.ones(1 << 28, dtype=torch.uint8)  # 256 MiB
    b = torch.empty_like(a)
    best = 0.0
    for _ in range(5):
        t = time.perf_counter()
        b.copy_(a)
        best = max(best, 2 * a.numel() / (time.perf_counter() - t) / 1e9)  # read + write
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=256)
    ap.add_argument("--hf-batch", type=int, default=32)
    ap.add_argument("--prefill-len", type=int, default=2048)
    ap.add_argument("--kv-gib", type=float, default=1.0)
    ap.add_argument("--skip-hf", action="store_true")
    ap.add_argument("--hf-weights", nargs="+", default=["packed", "dense"], choices=["packed", "dense"],
                    help="HF reference(s): the GGUF as transformers loads it (packed), and/or dequantised (dense)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    a = ap.parse_args()
    if a.quick:
        a.requests, a.new_tokens, a.hf_batch, a.prefill_len = 16, 32, 8, 512
    torch.set_num_threads(a.threads)
    print(f"# SmolLM2-135M, dtype {a.dtype}, {a.threads} threads, torch {torch.__version__}", flush=True)

    eng = LLMEngine("smollm2-135m", device="cpu", dtype=a.dtype, threads=a.threads, kv_cache_gib=a.kv_gib,
                    ignore_eos=True)
    weight_bytes = single_row_weight_bytes(eng.model)
    run_native(eng, prompts(2, 32, 7), 8)  # warm-up
    ours = {}
    ours["batch"] = run_native(eng, prompts(a.requests, a.prompt_len, 1), a.new_tokens)["decode_tok_s"]
    print(f"native decode, {a.requests} concurrent: {ours['batch']:.1f} tok/s", flush=True)
    ours["single"] = run_native(eng, prompts(1, a.prompt_len, 2), a.new_tokens)["decode_tok_s"]
    print(f"native decode, 1 stream: {ours['single']:.1f} tok/s", flush=True)
    ours["prefill"] = native_prefill(eng, a.prefill_len)
    print(f"native prefill {a.prefill_len}: {ours['prefill']:.0f} tok/s", flush=True)
    rss_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20)
    bw = measured_bandwidth_gbs()
    int4_on = eng.int4_bytes > 0
    del eng
    gc.collect()
    if int4_on:  # the same single stream with every matrix read as dense bf16, for comparison
        eng = LLMEngine("smollm2-135m", device="cpu", dtype=a.dtype, threads=a.threads, kv_cache_gib=a.kv_gib,
                        ignore_eos=True, int4=False)
        run_native(eng, prompts(2, 32, 7), 8)
        ours["single_dense"] = run_native(eng, prompts(1, a.prompt_len, 2), a.new_tokens)["decode_tok_s"]
        print(f"native decode, 1 stream, dense {a.dtype} weights: {ours['single_dense']:.1f} tok/s", flush=True)
        del eng
        gc.collect()

    hf: dict[str, dict[str, float]] = {}  # HF variant -> metric -> rate
    for variant in ([] if a.skip_hf else a.hf_weights):
        model = hf_model(variant, torch.bfloat16 if a.dtype == "bf16" else torch.float32)
        r = hf[variant] = {}
        r["batch"] = hf_decode(model, prompts(a.hf_batch, a.prompt_len, 1), a.new_tokens)
        print(f"HF ({variant}) decode, batch {a.hf_batch}: {r['batch']:.1f} tok/s", flush=True)
        r["single"] = hf_decode(model, prompts(1, a.prompt_len, 2), a.new_tokens)
        print(f"HF ({variant}) decode, batch 1: {r['single']:.1f} tok/s", flush=True)
        r["prefill"] = hf_prefill(model, a.prefill_len)
        print(f"HF ({variant}) prefill {a.prefill_len}: {r['prefill']:.0f} tok/s", flush=True)
        del model
        gc.collect()

    roof = NOTES_BANDWIDTH_GBS * 1e9 / weight_bytes
    rows = [  # (label, our key, HF key, goal)
        (f"decode tok/s, native {a.requests} concurrent vs HF batch {a.hf_batch}", "batch", "batch", ">= 3x"),
        ("decode tok/s, 1 stream vs HF batch 1", "single", "single", ">= 2x"),
        (f"decode tok/s, 1 stream with dense {a.dtype} weights (int4 off) vs HF batch 1", "single_dense", "single", ""),
        (f"prefill tok/s, {a.prefill_len}-token prompt", "prefill", "prefill", ">= 1x"),
    ]
    variants = list(hf)
    print(f"\n| metric ({a.dtype}, {a.threads} threads) | native | "
          + " | ".join(f"HF {v} | ratio" for v in variants) + " | goal |")
    print("|---|---:|" + "---:|---:|" * len(variants) + "---|")
    for label, key, hf_key, goal in rows:
        if key not in ours:
            continue
        cells = []
        for v in variants:
            h = hf[v].get(hf_key)
            cells += [f"{h:.1f}", f"{ours[key] / h:.2f}x"]
        print(f"| {label} | {ours[key]:.1f} | " + "".join(c + " | " for c in cells) + f"{goal} |")
    blank = " |" * (2 * len(variants))
    print(f"| 1-stream decode as a fraction of the bandwidth roofline ({weight_bytes / 1e6:.0f} MB of weights read "
          f"per step at {NOTES_BANDWIDTH_GBS:.0f} GB/s = {roof:.0f} tok/s) | {ours['single'] / roof:.0%} |{blank} |")
    print(f"| peak RSS of the native run, {a.kv_gib:g} GiB KV budget | {rss_gib:.2f} GiB |{blank} < 2 GiB |")
    print(f"\nmemory copy bandwidth measured now (read+write): {bw:.1f} GB/s; roofline uses {NOTES_BANDWIDTH_GBS:.0f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
