"""Built-in engine vs HF transformers `generate` and llama.cpp, side by side in one run (same model file, dtype,
threads).

    python benchmarks/bench_native.py [--dtype bf16|fp32] [--threads 2] [--quick] [--hf-weights packed dense]
                                      [--skip-short] [--skip-long] [--long-batch 16 64]
    python benchmarks/bench_native.py --batch-path [--rounds 1] [--isa both|as-is] [--kv-cache-dtype auto int8]
                                      [--block-size 16 128]

--batch-path runs only the batch path: --requests (64) requests of --prompt-len (128) tokens and --new-tokens (256)
through the harness generate stage (harness.generate.run_generation over NativeEngine), this change against the
same engine switched back to per-token hand-off and F.linear matmuls, interleaved, beside the engine alone and HF
dense generate at --hf-batch (32); then again in a child process with oneDNN capped below AMX
(ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16) when the CPU has AMX. The CPU model and AMX use print beside each table.

Decode rates count output tokens after the first (prefill excluded); tokens/s/user = 1 / time per output token.
HF runs twice by default: the GGUF as transformers loads it (packed) and the same model dequantised (dense).
The long-context part compares the engine with its compiled kernels (engine/native/kernels) against itself
without them (the gather path, "before") and against llama.cpp (llama-cpp-python, the `bench` extra; skipped
when not installed), in interleaved windows of decode steps whose medians are reported.
"""
from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cli import add_numbers  # noqa: E402
from engine.base import SamplingParams  # noqa: E402
from engine.native.llm_engine import LLMEngine  # noqa: E402
from engine.native.model_registry import DEFAULT_MODEL, resolve_model  # noqa: E402

NOTES_BANDWIDTH_GBS = 45.0  # measured memory bandwidth of the 2-core development machine


def prompts(n: int, length: int, seed: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    # Token ids drawn from the ordinary-text range; distinct prompts so the prefix cache never helps.
    return [[1] + torch.randint(200, 40000, (length - 1,), generator=g).tolist() for _ in range(n)]


def run_native(eng: LLMEngine, batch: list[list[int]], new_tokens: int) -> dict:
    """Run a batch to completion; time steps that only decode (no prefill tokens) separately. out_tok_s counts
    every output token over the whole wall time, prefill included (what a client of the engine sees)."""
    for i, p in enumerate(batch):
        eng.add_request(p, SamplingParams(max_tokens=new_tokens), f"b{time.perf_counter_ns()}-{i}")
    t0 = time.perf_counter()
    decode_s = decode_tokens = outputs = 0
    first = None
    while eng.has_unfinished():
        t = time.perf_counter()
        out = eng.step()
        st = out.stats
        dt = time.perf_counter() - t
        outputs += sum(len(o.new_token_ids) for o in out.outputs)
        if st.num_prefill_tokens == 0 and st.num_decode_tokens:
            decode_s += dt
            decode_tokens += st.num_decode_tokens
        elif first is None and st.num_decode_tokens == 0:
            first = time.perf_counter() - t0
    total = time.perf_counter() - t0
    return {"decode_tok_s": decode_tokens / decode_s, "total_s": total, "ttft_s": first, "out_tok_s": outputs / total}


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
    return hf_rates(model, batch, new_tokens)[0]


def hf_rates(model, batch: list[list[int]], new_tokens: int) -> tuple[float, float]:
    """HF generate: (decode tok/s after the first token, prefill excluded; every output token / whole call)."""
    ids = torch.tensor(batch)
    kw = dict(attention_mask=torch.ones_like(ids), do_sample=False, pad_token_id=2)
    with torch.inference_mode():
        t = time.perf_counter()
        model.generate(ids, max_new_tokens=1, min_new_tokens=1, **kw)
        prefill_s = time.perf_counter() - t
        t = time.perf_counter()
        model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, **kw)
        total_s = time.perf_counter() - t
    return len(batch) * (new_tokens - 1) / (total_s - prefill_s), len(batch) * new_tokens / total_s


def hf_decode_steps(model, batch: list[list[int]], steps: int) -> float:
    """HF decode rate after one prefill forward: `steps` greedy one-token forwards over its KV cache, timed alone
    (at long context a generate()-minus-prefill difference drowns in the prefill's own noise)."""
    ids = torch.tensor(batch)
    with torch.inference_mode():
        out = model(ids, use_cache=True, logits_to_keep=1)
        past, tok = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        t = time.perf_counter()
        for _ in range(steps):
            out = model(tok, past_key_values=past, use_cache=True)
            past, tok = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        return len(batch) * steps / (time.perf_counter() - t)


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
    int8 = getattr(model, "lm_head_int8", None)
    head = getattr(model, "lm_head_fp16", None)
    head = model.lm_head if head is None else head
    head_bytes = sum(t.numel() * t.element_size() for t in int8) if int8 else head.numel() * head.element_size()
    return total + head_bytes + model.norm.numel() * model.norm.element_size()


def hf_model(variant: str, dtype: torch.dtype):
    """HF LlamaForCausalLM on the same GGUF file. "packed": as transformers loads it (this transformers keeps
    the Q4_1 matrices packed and computes in float32 kernels); "dense": every matrix dequantised to `dtype`
    (the form older transformers releases loaded, and what HF runs for a bf16 checkpoint)."""
    import transformers
    path = resolve_model(DEFAULT_MODEL).path
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


# ---- long context and llama.cpp -------------------------------------------------------------------------
def use_kernels(eng: LLMEngine, on: bool) -> None:
    """Switch the engine between its compiled kernels and the plain PyTorch path it had before them."""
    from engine.native import kernels
    on = kernels.set_enabled(on)
    model = eng.model
    if getattr(model, "lm_head_int8", None) is not None or hasattr(model, "bench_int8"):
        # Before the kernels, one-row logits read an fp16 copy of the head.
        model.bench_int8 = getattr(model, "bench_int8", None) or model.lm_head_int8
        model.lm_head_int8 = model.bench_int8 if on else None
        if model.lm_head_fp16 is None:
            model.lm_head_fp16 = model.lm_head.detach().half()
    for layer in model.layers:
        layer.fused_rope = on
        layer.fused_norm = on and layer.kv_cache.dtype == torch.bfloat16


class NativeStreams:
    """Requests kept decoding in one engine; step(n) times n decode steps and returns decode tokens/s."""

    def __init__(self, eng: LLMEngine, batch: list[list[int]], max_tokens: int, kernels: bool = True):
        self.eng, self.kernels = eng, kernels
        use_kernels(eng, kernels)
        for i, p in enumerate(batch):
            eng.add_request(p, SamplingParams(max_tokens=max_tokens), f"s{time.perf_counter_ns()}-{i}")
        while eng.step().stats.num_prefill_tokens:  # prefill in chunks until every request decodes
            pass

    def step(self, n: int, kernels: bool | None = None) -> float:
        use_kernels(self.eng, self.kernels if kernels is None else kernels)
        tokens, t = 0, time.perf_counter()
        for _ in range(n):
            tokens += self.eng.step().stats.num_decode_tokens
        return tokens / (time.perf_counter() - t)

    def finish(self) -> None:
        self.eng.abort_all()
        self.eng.step()
        use_kernels(self.eng, True)


def llama_cpp(threads: int, n_ctx: int):
    """llama.cpp on the same GGUF (None when llama-cpp-python is not installed)."""
    try:
        import llama_cpp
    except ImportError:
        return None
    return llama_cpp.Llama(str(resolve_model(DEFAULT_MODEL).path), n_ctx=n_ctx, n_batch=2048, n_threads=threads,
                           n_threads_batch=threads, verbose=False)


class LlamaStream:
    """One greedy llama.cpp stream: the prompt evaluated, then one token per eval (logits read and argmax taken,
    as the engine samples every step)."""

    def __init__(self, llm, prompt: list[int]):
        self.llm = llm
        llm.reset()
        llm.eval(prompt)
        self.token = self._argmax()

    def _argmax(self) -> int:
        import llama_cpp
        import numpy as np
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits(self.llm.ctx), shape=(self.llm.n_vocab(),))
        return int(logits.argmax())

    def step(self, n: int) -> float:
        t = time.perf_counter()
        for _ in range(n):
            self.llm.eval([self.token])
            self.token = self._argmax()
        return n / (time.perf_counter() - t)


def llama_prefill(llm, length: int, reps: int = 3) -> float:
    times = []
    for r in range(reps):
        llm.reset()
        t = time.perf_counter()
        llm.eval(prompts(1, length, 1000 + r)[0])
        times.append(time.perf_counter() - t)
    return length / statistics.median(times)


def interleaved(runs: dict[str, Callable[[int], float]], steps: int, repeats: int) -> dict[str, float]:
    """Median rate of each run over `repeats` rounds, the runs taking turns within each round."""
    rates: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):
        for k, run in runs.items():
            rates[k].append(run(steps))
    return {k: statistics.median(v) for k, v in rates.items()}


def long_context(a, hf_variant: str | None) -> list[tuple[str, float, dict[str, float], str]]:
    """Rows (label, native rate, {reference: rate}, goal) for single streams at short and 2,048-token context,
    batched decode at 2,048-token context, and a 2,048-token prefill."""
    rows = []
    eng = LLMEngine(DEFAULT_MODEL, device="cpu", dtype=a.dtype, threads=a.threads, kv_cache_gib=a.long_kv_gib,
                    ignore_eos=True)
    run_native(eng, prompts(2, 32, 7), 8)  # warm-up
    llm = llama_cpp(a.threads, n_ctx=a.long_ctx + 8 * a.long_steps * a.long_repeats)
    for ctx in (32, a.long_ctx):
        budget = 4 * a.long_steps * a.long_repeats
        new = NativeStreams(eng, prompts(1, ctx, 20 + ctx), budget)
        runs = {"native": new.step, "before": lambda n: new.step(n, kernels=False)}
        if llm is not None:
            runs["llama.cpp"] = LlamaStream(llm, prompts(1, ctx, 20 + ctx)[0]).step
        r = interleaved(runs, a.long_steps, a.long_repeats)
        new.finish()
        print(f"1 stream at {ctx} tokens of context: " + ", ".join(f"{k} {v:.1f}" for k, v in r.items()), flush=True)
        rows.append((f"decode tok/s, 1 stream, {ctx}-token context", r.pop("native"), r, ">= 1x llama.cpp"))
    for n in a.long_batch:
        streams = NativeStreams(eng, prompts(n, a.long_ctx, 40 + n), 2 * a.long_steps * a.long_repeats + 2)
        r = interleaved({"native": streams.step, "before": lambda k: streams.step(k, kernels=False)},
                        max(a.long_steps // 4, 2), a.long_repeats)
        streams.finish()
        if hf_variant is not None:
            model = hf_model(hf_variant, torch.bfloat16 if a.dtype == "bf16" else torch.float32)
            r[f"HF {hf_variant}"] = hf_decode_steps(model, prompts(n, a.long_ctx, 40 + n), a.long_steps)
            del model
            gc.collect()
        print(f"{n} streams at {a.long_ctx} tokens of context: " + ", ".join(f"{k} {v:.1f}" for k, v in r.items()),
              flush=True)
        rows.append((f"decode tok/s, {n} streams, {a.long_ctx}-token context", r.pop("native"), r,
                     ">= 3x HF, >= 1.5x before"))
    r = {}
    if llm is not None:
        r["llama.cpp"] = llama_prefill(llm, a.long_ctx)
    if hf_variant is not None:
        model = hf_model(hf_variant, torch.bfloat16 if a.dtype == "bf16" else torch.float32)
        r[f"HF {hf_variant}"] = hf_prefill(model, a.long_ctx)
        del model
    ours = native_prefill(eng, a.long_ctx)
    print(f"prefill {a.long_ctx}: native {ours:.0f}, " + ", ".join(f"{k} {v:.0f}" for k, v in r.items()), flush=True)
    rows.append((f"prefill tok/s, {a.long_ctx}-token prompt", ours, r, ">= 1x HF and llama.cpp"))
    del eng, llm
    gc.collect()
    return rows


def print_long_table(a, rows) -> None:
    print(f"\n| metric ({a.dtype}, {a.threads} threads) | native | reference: rate (native / reference) | goal |")
    print("|---|---:|---|---|")
    for label, ours, refs, goal in rows:
        cells = "; ".join(f"{k}: {v:.1f} ({ours / v:.2f}x)" for k, v in refs.items())
        print(f"| {label} | {ours:.1f} | {cells} | {goal} |")


# ---- the batch path through the harness `generate` stage (issue 24 item 5) --------------------------------
NO_AMX_ISA = "AVX512_CORE_BF16"  # oneDNN's cap that emulates an AVX-512 BF16 CPU without AMX (e.g. AMD EPYC)


def cpu_line() -> str:
    """The CPU model and which bf16 matmul instructions oneDNN may use in this process."""
    from sweep.provenance import cpu_name
    try:
        flags = set(next(l for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("flags")).split())
    except (OSError, StopIteration):
        flags = set()
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "")
    if "amx_bf16" not in flags:
        amx = "AMX absent"
    elif cap and "AMX" not in cap.upper() and cap.upper() not in ("ALL", "DEFAULT"):
        amx = f"AMX present but not used (ONEDNN_MAX_CPU_ISA={cap})"
    else:
        amx = "AMX used for bf16 matmuls"
    have = [f for f in ("avx512_bf16", "avx512_vnni", "amx_int8") if f in flags]
    return f"CPU {cpu_name()}; {amx}; {', '.join(have) or 'no AVX-512 BF16/VNNI'}"


def generate_items(eng: LLMEngine, task, n: int, length: int, seed: int) -> list:
    """n distinct items whose rendered chat prompt is about `length` tokens (random words; the prefix cache can
    only share the template's opening)."""
    from tasks import Item
    words = ("river", "stone", "garden", "number", "window", "paper", "yellow", "music", "table", "winter",
             "market", "silver", "orange", "bridge", "forest", "candle", "doctor", "planet", "circle", "engine")
    g = torch.Generator().manual_seed(seed)
    items = []
    for i in range(n):
        text: list[str] = []
        while True:
            prompt = task.render(Item(id="x", fields={"problem": " ".join(text), "answer": "0"}), 0, 0)
            if len(eng.tokenizer.encode(eng.tokenizer.render_chat(prompt.messages))) >= length:
                break
            text += [words[int(k)] for k in torch.randint(len(words), (4,), generator=g)]
        items.append(Item(id=f"s{seed}-{i}", fields={"problem": " ".join(text), "answer": "0"}))
    return items


def use_new_matmuls(on: bool) -> None:
    """Switch this change's matmul paths (oneDNN-packed bf16; VNNI int8 x int4 for 13+ rows without AMX) on, or back to
    F.linear on the plain bf16 weights (before)."""
    from engine.native import int4_weights, packed_weights
    packed_weights.set_enabled(on)
    int4_weights.set_vnni_enabled(on)


def matmul_line(eng: LLMEngine) -> str:
    layer = eng.model.layers[0]
    if getattr(layer, "vnni", None):
        return "steps of 13+ rows: VNNI int8 x int4 codes (no AMX)"
    if getattr(layer, "packed", None):
        return "steps of 13+ rows: oneDNN-packed bf16"
    return "steps of 13+ rows: F.linear bf16"


def harness_generate(eng: LLMEngine, items: list, new_tokens: int, lean: bool, root: Path) -> dict:
    """Every item once through harness.generate.run_generation over NativeEngine (all items concurrent): output
    tokens / wall time of the whole stage (prefill, records and the hand-off included)."""
    import asyncio
    import json
    from engine.native.backend import NativeEngine
    from harness.generate import GenerateConfig, run_generation
    from tasks import get_task
    task = get_task("aime")
    out = root / f"run-{time.perf_counter_ns()}"
    cfg = GenerateConfig(task=task, data_path=task.demo_data_path, out=out, samples=1, limit=None,
                         sampling=SamplingParams(max_tokens=new_tokens), concurrency=len(items), progress=False)

    async def go() -> float:
        native = NativeEngine(eng, lean_delivery=lean)
        try:
            t = time.perf_counter()
            result = await run_generation(cfg, native, items, DEFAULT_MODEL)
            elapsed = time.perf_counter() - t
        finally:
            await native.aclose()
        assert result.errors == 0, result.error_examples
        return elapsed

    cpu0 = time.thread_time()
    elapsed = asyncio.run(go())
    loop_cpu = time.thread_time() - cpu0  # the event loop's thread: CPU taken from the engine's compute threads
    recs = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    tokens = sum(r["usage"]["completion_tokens"] for r in recs)
    prompt = statistics.mean(r["usage"]["prompt_tokens"] for r in recs)
    return {"out_tok_s": tokens / elapsed, "prompt_tokens": prompt, "tokens": tokens, "loop_cpu_s": loop_cpu}


def batch_path(a) -> dict[str, float]:
    """Engine alone vs the generate stage (new and old hand-off, interleaved rounds, fresh prompts each run) vs
    HF generate at batch a.hf_batch; prints one table for this process's CPU setting. With several KV cache
    precisions or block sizes, one engine for each pair, all built first and taking turns round by round (a process's
    first engine measured ~8% faster than its second when they ran one after the other)."""
    import tempfile
    from tasks import get_task
    print(f"# {cpu_line()}; load average {os.getloadavg()[0]:.1f}", flush=True)
    task = get_task("aime")
    rates: dict[str, list[float]] = {}
    loop_cpu: dict[str, list[float]] = {}
    engines = {}
    for kv_dtype in a.kv_cache_dtype:
        for block in a.block_size:
            eng = engines[kv_dtype, block] = LLMEngine(
                DEFAULT_MODEL, device="cpu", dtype=a.dtype, threads=a.threads, kv_cache_gib=a.kv_gib, ignore_eos=True,
                kv_cache_dtype=kv_dtype, block_size=block)
            print(f"# {matmul_line(eng)}; KV cache {eng.describe()['kv_cache_dtype']}, blocks of {block} tokens",
                  flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for eng in engines.values():
            harness_generate(eng, generate_items(eng, task, 2, 32, 99), 8, True, Path(tmp))  # warm-up
        for r in range(a.rounds):
            for (kv_dtype, block), eng in engines.items():
                batch_path_round(a, task, eng, engine_label(a, kv_dtype, block), r, Path(tmp), rates, loop_cpu)
    del engines, eng
    gc.collect()
    ours = {k: statistics.median(v) for k, v in rates.items()}
    _batch_path_report(a, ours, loop_cpu)
    return ours


def engine_label(a, kv_dtype: str, block: int) -> str:
    """The suffix of this engine's rows: its KV precision unless auto, its block size when several are measured."""
    parts = [f"{kv_dtype} KV cache"] if kv_dtype != "auto" else []
    if len(a.block_size) > 1:
        parts.append(f"blocks of {block}")
    return "".join(f", {p}" for p in parts)


def batch_path_round(a, task, eng: LLMEngine, suffix: str, r: int, tmp: Path, rates: dict[str, list[float]],
                     loop_cpu: dict[str, list[float]]) -> None:
    """Round r of one engine: engine alone, then generate with the new and the old hand-off; appends to rates and
    loop_cpu under keys ending in suffix (engine_label)."""
    new_key, old_key = "generate, this change" + suffix, "generate, before (per-token hand-off, F.linear bf16)" + suffix
    keys = ["engine alone, whole run" + suffix, "engine alone, decode steps only" + suffix, new_key, old_key]
    for k in keys:
        rates.setdefault(k, [])
    for k in keys[2:]:
        loop_cpu.setdefault(k, [])
    items = generate_items(eng, task, a.requests, a.prompt_len, 100 + 3 * r)
    ids = [eng.tokenizer.encode(eng.tokenizer.render_chat(task.render(it, 0, 0).messages)) for it in items]
    with ThreadPoolExecutor(1) as pool:  # the engine steps on a background thread, as under NativeEngine
        res = pool.submit(run_native, eng, ids, a.new_tokens).result()
    rates[keys[0]].append(res["out_tok_s"])
    rates[keys[1]].append(res["decode_tok_s"])
    for key, new, seed in ((new_key, True, 101), (old_key, False, 102)):
        use_new_matmuls(new)
        try:
            g = harness_generate(eng, generate_items(eng, task, a.requests, a.prompt_len, seed + 3 * r),
                                 a.new_tokens, new, tmp)
        finally:
            use_new_matmuls(True)
        rates[key].append(g["out_tok_s"])
        loop_cpu[key].append(g["loop_cpu_s"] / g["tokens"] * 1e6)
    print(f"round {r + 1}{suffix}: " + ", ".join(f"{k} {rates[k][-1]:.1f}" for k in keys)
          + f" (mean prompt {g['prompt_tokens']:.0f} tokens); event-loop thread CPU us per output token: "
          + ", ".join(f"{k} {loop_cpu[k][-1]:.0f}" for k in keys[2:]), flush=True)


def _batch_path_report(a, ours: dict[str, float], loop_cpu: dict[str, list[float]]) -> None:
    """HF generate at batch a.hf_batch, then the table of our rates against it."""
    hf = {}
    if not a.skip_hf:
        model = hf_model("dense", torch.bfloat16 if a.dtype == "bf16" else torch.float32)
        # On a worker thread, as the engine steps on one: with two OpenMP threads on a busy 2-core machine, the
        # main thread's parallel regions ran 3-10x slower than a worker thread's in the same process (measured).
        with ThreadPoolExecutor(1) as pool:
            pool.submit(hf_rates, model, prompts(2, 32, 7), 4).result()  # warm-up
            hf["decode"], hf["whole"] = pool.submit(hf_rates, model, prompts(a.hf_batch, a.prompt_len, 1),
                                                    a.new_tokens).result()
        del model
        gc.collect()
    print(f"\n| {a.requests} requests x {a.prompt_len}-token prompts x {a.new_tokens} new tokens ({a.dtype}, "
          f"{a.threads} threads) | output tok/s | vs HF dense batch {a.hf_batch}, decode only | vs HF, whole call |")
    print("|---|---:|---:|---:|")
    for k, v in ours.items():
        cells = [f"{v / hf['decode']:.2f}x", f"{v / hf['whole']:.2f}x"] if hf else ["", ""]
        print(f"| {k} | {v:.1f} | {cells[0]} | {cells[1]} |")
    if hf:
        print(f"| HF generate, batch {a.hf_batch}: decode only / whole call | {hf['decode']:.1f} / {hf['whole']:.1f} | | |")
    for k, v in loop_cpu.items():
        print(f"| {k}: event-loop thread CPU per output token | {statistics.median(v):.0f} us | | |")
    print(f"\n{cpu_line()}; load average at the end {os.getloadavg()[0]:.1f}", flush=True)


def batch_path_both(a) -> int:
    """The batch path as this CPU runs it, then in a child process with oneDNN capped below AMX (when present)."""
    batch_path(a)
    if a.isa == "as-is" or "amx_bf16" not in Path("/proc/cpuinfo").read_text():
        return 0
    print(f"\n# again with ONEDNN_MAX_CPU_ISA={NO_AMX_ISA} (no AMX, as on an AVX-512 BF16 CPU without it)", flush=True)
    argv = [sys.executable, __file__] + [x for x in sys.argv[1:] if x != "--isa"] + ["--isa", "as-is"]
    # the VNNI matmuls are opt-in (they change outputs); this half measures them unless told otherwise
    return subprocess.call(argv, env={"HARNESS_VNNI": "auto", **os.environ, "ONEDNN_MAX_CPU_ISA": NO_AMX_ISA})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    add_numbers(ap, threads=2, requests=64, prompt_len=128, new_tokens=256, hf_batch=32, prefill_len=2048, kv_gib=1.0)
    ap.add_argument("--skip-hf", action="store_true")
    ap.add_argument("--hf-weights", nargs="+", default=["packed", "dense"], choices=["packed", "dense"],
                    help="HF reference(s): the GGUF as transformers loads it (packed), and/or dequantised (dense)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--skip-short", action="store_true", help="skip the HF comparison at 128-token prompts")
    ap.add_argument("--skip-long", action="store_true", help="skip the long-context and llama.cpp comparison")
    ap.add_argument("--long-ctx", type=int, default=2048)
    ap.add_argument("--long-batch", type=int, nargs="*", default=[16], help="batched decode sizes at --long-ctx")
    ap.add_argument("--long-steps", type=int, default=16, help="decode steps per interleaved window")
    ap.add_argument("--long-repeats", type=int, default=5, help="interleaved windows per run (median reported)")
    ap.add_argument("--long-kv-gib", type=float, default=2.0)
    ap.add_argument("--batch-path", action="store_true",
                    help="only the batch path: --requests through the harness generate stage vs HF at --hf-batch")
    ap.add_argument("--isa", default="both", choices=["both", "as-is"],
                    help="--batch-path: also rerun with oneDNN capped below AMX (both), or only as this process is")
    ap.add_argument("--rounds", type=int, default=1, help="--batch-path: interleaved rounds (median reported)")
    ap.add_argument("--kv-cache-dtype", nargs="+", default=["auto"], choices=["auto", "int8"],
                    help="--batch-path: the engine's KV cache precision(s), each measured in turn in this process")
    ap.add_argument("--block-size", type=int, nargs="+", default=[16],
                    help="--batch-path: KV block size(s) in tokens (the engine's default: 16), each measured in turn")
    a = ap.parse_args()
    if a.quick:
        a.requests, a.new_tokens, a.hf_batch, a.prefill_len = 16, 32, 8, 512
        a.long_ctx, a.long_batch, a.long_steps, a.long_repeats = 512, [4], 8, 3
    torch.set_num_threads(a.threads)
    if a.batch_path:
        return batch_path_both(a)
    print(f"# SmolLM2-135M, dtype {a.dtype}, {a.threads} threads, torch {torch.__version__}, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    if not a.skip_long:
        long_rows = long_context(a, None if a.skip_hf else a.hf_weights[-1])
        print_long_table(a, long_rows)
    if a.skip_short:
        return 0

    eng = LLMEngine(DEFAULT_MODEL, device="cpu", dtype=a.dtype, threads=a.threads, kv_cache_gib=a.kv_gib,
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
        eng = LLMEngine(DEFAULT_MODEL, device="cpu", dtype=a.dtype, threads=a.threads, kv_cache_gib=a.kv_gib,
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
