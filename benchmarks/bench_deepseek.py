"""DeepSeek-V3-style model in the built-in engine: decode tokens/s with nextn 0 vs MTP nextn 3 at synthetic
acceptance p, next to the analytical expectation from measured step times; latent vs full KV bytes/token.

    python benchmarks/bench_deepseek.py [--batch 1 4] [--nextn 3] [--accept 0.75] [--threads 1]

The model is a small random DeepSeek-V3 config written to a temp folder (HF layout, MTP layer included).
Synthetic acceptance (sweep/acceptance.py's definition): draft i is accepted iff drafts 1..i-1 were and a
seeded uniform < p, so E[AL] = 1 + p + ... + p^nextn; the real draft and verify work still runs.
Expected speedup = E[AL] x T(plain decode step) / T(spec step), from the median step times of this run;
realised speedup = measured tokens per step / median step time, relative to nextn 0.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cli import add_numbers  # noqa: E402
from engine.base import SamplingParams  # noqa: E402

BENCH_CONFIG = dict(
    architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3", vocab_size=4096, hidden_size=512,
    intermediate_size=1536, moe_intermediate_size=256, num_hidden_layers=12, num_attention_heads=8,
    num_key_value_heads=8, n_shared_experts=1, n_routed_experts=32, num_experts_per_tok=4, n_group=4, topk_group=2,
    routed_scaling_factor=2.5, kv_lora_rank=128, q_lora_rank=256, qk_rope_head_dim=32, qk_nope_head_dim=64,
    v_head_dim=64, first_k_dense_replace=1, norm_topk_prob=True, rms_norm_eps=1e-6, max_position_embeddings=4096,
    rope_theta=10000.0, rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024,
                                      "mscale": 1.0, "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1},
    num_nextn_predict_layers=1, bos_token_id=0, eos_token_id=1, hidden_act="silu", scoring_func="sigmoid",
    topk_method="noaux_tc", tie_word_embeddings=False,
)
# DeepSeek-V3's published config.json values that decide the KV layout.
DEEPSEEK_V3 = dict(num_hidden_layers=61, num_attention_heads=128, kv_lora_rank=512, qk_rope_head_dim=64,
                   qk_nope_head_dim=128, v_head_dim=128)


def write_random_checkpoint(folder: Path, cfg: dict, seed: int = 0) -> None:
    """HF-named random tensors (model.layers.{N}.* is the MTP module) plus a word-level tokenizer."""
    from safetensors.torch import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers
    g = torch.Generator().manual_seed(seed)
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    qk, v = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    t: dict[str, torch.Tensor] = {}

    def w(name, *shape):
        t[name] = (torch.ones(shape) + 0.1 * torch.randn(shape, generator=g)) if len(shape) == 1 else \
            torch.randn(shape, generator=g) * shape[-1] ** -0.5

    def layer(p, moe):
        w(p + "input_layernorm.weight", d)
        w(p + "post_attention_layernorm.weight", d)
        a = p + "self_attn."
        w(a + "q_a_proj.weight", cfg["q_lora_rank"], d)
        w(a + "q_a_layernorm.weight", cfg["q_lora_rank"])
        w(a + "q_b_proj.weight", H * qk, cfg["q_lora_rank"])
        w(a + "kv_a_proj_with_mqa.weight", cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"], d)
        w(a + "kv_a_layernorm.weight", cfg["kv_lora_rank"])
        w(a + "kv_b_proj.weight", H * (cfg["qk_nope_head_dim"] + v), cfg["kv_lora_rank"])
        w(a + "o_proj.weight", d, H * v)
        m = p + "mlp."
        if not moe:
            for n, shape in (("gate_proj", (cfg["intermediate_size"], d)), ("up_proj", (cfg["intermediate_size"], d)),
                             ("down_proj", (d, cfg["intermediate_size"]))):
                w(f"{m}{n}.weight", *shape)
            return
        I = cfg["moe_intermediate_size"]
        w(m + "gate.weight", cfg["n_routed_experts"], d)
        t[m + "gate.e_score_correction_bias"] = 0.01 * torch.randn(cfg["n_routed_experts"], generator=g)
        for e in range(cfg["n_routed_experts"]):
            w(f"{m}experts.{e}.gate_proj.weight", I, d)
            w(f"{m}experts.{e}.up_proj.weight", I, d)
            w(f"{m}experts.{e}.down_proj.weight", d, I)
        w(m + "shared_experts.gate_proj.weight", I * cfg["n_shared_experts"], d)
        w(m + "shared_experts.up_proj.weight", I * cfg["n_shared_experts"], d)
        w(m + "shared_experts.down_proj.weight", d, I * cfg["n_shared_experts"])

    w("model.embed_tokens.weight", cfg["vocab_size"], d)
    w("model.norm.weight", d)
    w("lm_head.weight", cfg["vocab_size"], d)
    n = cfg["num_hidden_layers"]
    for i in range(n):
        layer(f"model.layers.{i}.", i >= cfg["first_k_dense_replace"])
    p = f"model.layers.{n}."
    layer(p, True)
    for name in ("enorm", "hnorm", "shared_head.norm"):
        w(f"{p}{name}.weight", d)
    w(p + "eh_proj.weight", d, 2 * d)
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: x.contiguous() for k, x in t.items()}, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(cfg))
    tk = Tokenizer(models.WordLevel({f"t{i}": i for i in range(cfg["vocab_size"])}, unk_token="t2"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{% for m in messages %}"
                                                              "{{ m['content'] }} {% endfor %}"}))


def kv_bytes(cfg: dict, dtype_bytes: int = 2) -> tuple[int, int]:
    """(latent, full per-head K/V) bytes per token over the main layers."""
    L, H = cfg["num_hidden_layers"], cfg["num_attention_heads"]
    latent = L * (cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]) * dtype_bytes
    full = L * H * (cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"] + cfg["v_head_dim"]) * dtype_bytes
    return latent, full


def _start(folder: Path, batch: int, nextn: int, accept: float, context: int, threads: int):
    from engine.native.spec_engine import SpecLLMEngine
    eng = SpecLLMEngine(model=str(folder), device="cpu", dtype="fp32", threads=threads, kv_cache_gib=0.5,
                        nextn=nextn, synthetic_acceptance=accept if nextn else None, spec_seed=0,
                        ignore_eos=True)  # random weights: keep every request decoding
    g = torch.Generator().manual_seed(1)
    prefilling = {eng.add_request(torch.randint(3, BENCH_CONFIG["vocab_size"], (context,), generator=g).tolist(),
                                  SamplingParams(max_tokens=10_000)) for _ in range(batch)}
    while prefilling:  # until every request has its first token
        prefilling -= {o.request_id for o in eng.step().outputs}
    eng.draft_times = []
    if eng.drafter is not None:  # time the drafting half of a speculative step
        inner = eng.drafter.propose

        def timed(reqs):
            t0 = time.perf_counter()
            r = inner(reqs)
            eng.draft_times.append(time.perf_counter() - t0)
            return r
        eng.drafter.propose = timed
    return eng


def measure(folder: Path, batch: int, nextn: int, accept: float, context: int, steps: int, warmup: int,
            threads: int) -> tuple[dict, dict]:
    """Plain and speculative engines stepped alternately, so both see the same machine load."""
    engines = [_start(folder, batch, n, accept, context, threads) for n in (0, nextn)]
    times: list[list[float]] = [[], []]
    cpu: list[list[float]] = [[], []]
    tokens = [0, 0]
    for i in range(warmup + steps):
        for k, eng in enumerate(engines):
            c0 = time.process_time()
            out = eng.step()
            if i >= warmup:
                cpu[k].append(time.process_time() - c0)
                times[k].append(out.stats.elapsed_s)
                tokens[k] += out.stats.num_decode_tokens
    results = []
    for k, eng in enumerate(engines):
        step = statistics.median(times[k])  # medians: the shared machine's load spikes skew means
        st = eng.spec_stats
        results.append({"batch": batch, "nextn": eng.nextn, "step_ms": step * 1e3,
                        "cpu_ms": statistics.median(cpu[k]) * 1e3,
                        "tokens_per_s": tokens[k] / steps / step, "tokens_per_step_per_req": tokens[k] / steps / batch,
                        "draft_ms": statistics.median(eng.draft_times[warmup:]) * 1e3 if eng.draft_times[warmup:] else 0.0,
                        "acceptance_length": st.mean_acceptance_length if eng.nextn else 1.0,
                        "acceptance_per_position": [round(x, 3) for x in st.acceptance_per_position]})
    return results[0], results[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 4])
    add_numbers(ap, nextn=3, accept=0.75, context=128, steps=40, warmup=5, threads=1)
    args = ap.parse_args()
    from engine.native.spec_decode import SyntheticAcceptance
    expected_al = SyntheticAcceptance.expected_length(args.accept, args.nextn)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "dsv3-bench"
        write_random_checkpoint(folder, BENCH_CONFIG)
        import os
        os.environ.setdefault("HARNESS_CACHE_DIR", str(Path(tmp) / "cache"))
        print(f"model: {json.dumps({k: BENCH_CONFIG[k] for k in ('hidden_size', 'num_hidden_layers', 'n_routed_experts', 'num_experts_per_tok', 'kv_lora_rank', 'qk_rope_head_dim', 'vocab_size')})}")
        print(f"fp32, CPU, {args.threads} thread(s), context {args.context}, {args.steps} measured steps after "
              f"{args.warmup} warm-up; synthetic acceptance p={args.accept}, nextn={args.nextn}, "
              f"E[AL]={expected_al:.3f}")
        print("step ms = median wall time per engine step; cpu ms = median process CPU time per step (with one "
              "thread, what the step costs when the core is not shared); speedups in tokens/s relative to nextn 0")
        print(f"{'batch':>5} {'nextn':>5} {'step ms':>8} {'cpu ms':>7} {'draft ms':>8} {'tok/step/req':>12} "
              f"{'AL':>6} {'wall tok/s':>10} {'speedup':>8} {'expected':>8} {'cpu tok/s':>9} {'speedup':>8} "
              f"{'expected':>8}")
        for b in args.batch:
            base, spec = measure(folder, b, args.nextn, args.accept, args.context, args.steps, args.warmup, args.threads)
            for r in (base, spec):
                r["cpu_tokens_per_s"] = r["tokens_per_step_per_req"] * b / (r["cpu_ms"] / 1e3)
            rows = ((base, 1.0, 1.0, 1.0, 1.0),
                    (spec, spec["tokens_per_s"] / base["tokens_per_s"], expected_al * base["step_ms"] / spec["step_ms"],
                     spec["cpu_tokens_per_s"] / base["cpu_tokens_per_s"], expected_al * base["cpu_ms"] / spec["cpu_ms"]))
            for r, sp, ex, csp, cex in rows:
                print(f"{r['batch']:>5} {r['nextn']:>5} {r['step_ms']:>8.2f} {r['cpu_ms']:>7.2f} {r['draft_ms']:>8.2f} "
                      f"{r['tokens_per_step_per_req']:>12.3f} {r['acceptance_length']:>6.3f} {r['tokens_per_s']:>10.1f} "
                      f"{sp:>7.2f}x {ex:>7.2f}x {r['cpu_tokens_per_s']:>9.1f} {csp:>7.2f}x {cex:>7.2f}x")
            print(f"      realised AL {spec['acceptance_length']:.3f} (E {expected_al:.3f}); acceptance per position "
                  f"{spec['acceptance_per_position']}")
    for name, cfg in (("bench config", BENCH_CONFIG), ("DeepSeek-V3 (61 layers)", DEEPSEEK_V3)):
        lat, full = kv_bytes(cfg)
        print(f"KV bytes/token, bf16, {name}: latent {lat:,} vs full per-head K/V {full:,} ({full / lat:.1f}x smaller)")


if __name__ == "__main__":
    main()
