"""Tiny random DeepSeek-V3 checkpoints written to disk (HF layout + MTP layer), and helpers to run them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

TINY = dict(
    vocab_size=97, hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=3,
    num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1, n_routed_experts=8,
    routed_scaling_factor=2.5, kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=8, v_head_dim=12,
    qk_nope_head_dim=16, n_group=4, topk_group=2, num_experts_per_tok=2, first_k_dense_replace=1,
    max_position_embeddings=256, num_nextn_predict_layers=1, bos_token_id=0, eos_token_id=1,
    rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                     "original_max_position_embeddings": 64, "mscale": 1.0, "mscale_all_dim": 0.707,
                     "beta_fast": 32, "beta_slow": 1},
)


def _randomise(model: torch.nn.Module, seed: int) -> None:
    # Larger than HF's 0.02 init so logits are well separated and greedy ties never decide a test.
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.15 * torch.randn(p.shape, generator=g))
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.1 * torch.randn(b.shape, generator=g))


def _mtp_tensors(cfg: dict, state: dict[str, torch.Tensor], seed: int) -> dict[str, torch.Tensor]:
    """MTP module tensors named model.layers.{N}.* as DeepSeek ships them (a MoE block + enorm/hnorm/eh_proj/head)."""
    g = torch.Generator().manual_seed(seed + 1)
    n, d = cfg["num_hidden_layers"], cfg["hidden_size"]
    src = f"model.layers.{n - 1}."
    out = {}
    for m in range(n, n + cfg["num_nextn_predict_layers"]):
        p = f"model.layers.{m}."
        for k, v in state.items():
            if k.startswith(src):
                scale = 0.1 if v.dim() == 1 else 0.15
                base = 1.0 if v.dim() == 1 and not k.endswith("bias") else 0.0
                out[p + k[len(src):]] = base + scale * torch.randn(v.shape, generator=g)
        out[p + "enorm.weight"] = 1.0 + 0.1 * torch.randn(d, generator=g)
        out[p + "hnorm.weight"] = 1.0 + 0.1 * torch.randn(d, generator=g)
        out[p + "eh_proj.weight"] = 0.15 * torch.randn(d, 2 * d, generator=g)
        out[p + "shared_head.norm.weight"] = 1.0 + 0.1 * torch.randn(d, generator=g)
        out[p + "embed_tokens.weight"] = state["model.embed_tokens.weight"].clone()
        out[p + "shared_head.head.weight"] = state["lm_head.weight"].clone()
    return out


def _make_predictable(state: dict[str, torch.Tensor], cfg: dict, seed: int, noise: float) -> None:
    """Main model ~ "next token = perm(token)" (embedding residual dominates, lm_head = permuted embedding),
    MTP module ~ the same map applied to the next token (eh_proj passes the embedding half through), so
    drafts are often right. `noise` scales every other matrix: larger means more disagreement."""
    g = torch.Generator().manual_seed(seed + 2)
    V, d, n = cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"]
    for k, v in state.items():
        if v.dim() >= 2:
            state[k] = noise * torch.randn(v.shape, generator=g)
    embed = torch.randn(V, d, generator=g)
    perm = torch.randperm(V, generator=g)
    head = torch.empty_like(embed)
    head[perm] = embed
    state["model.embed_tokens.weight"], state["lm_head.weight"] = embed, head
    for m in range(n, n + cfg.get("num_nextn_predict_layers", 0)):
        p = f"model.layers.{m}."
        if p + "eh_proj.weight" in state:
            state[p + "eh_proj.weight"] = torch.cat([torch.eye(d), torch.zeros(d, d)], dim=1)
            state[p + "embed_tokens.weight"], state[p + "shared_head.head.weight"] = embed.clone(), head.clone()


def make_checkpoint(folder: Path, seed: int = 0, mtp: bool = True, predictable: float | None = None,
                    **overrides) -> Path:
    """Write config.json + model.safetensors for a tiny random DeepSeek-V3 (HF's own save layout).

    predictable=noise builds weights whose MTP drafts are often accepted (see _make_predictable)."""
    from safetensors.torch import load_file, save_file
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM
    cfg = {**TINY, **overrides}
    torch.manual_seed(seed)
    model = DeepseekV3ForCausalLM(DeepseekV3Config(**cfg))
    _randomise(model, seed)
    model.save_pretrained(folder)
    state = load_file(str(folder / "model.safetensors"))
    if mtp and cfg.get("num_nextn_predict_layers"):
        state.update(_mtp_tensors(cfg, state, seed))
    if predictable is not None:
        _make_predictable(state, cfg, seed, predictable)
    save_file({k: v.contiguous() for k, v in state.items()}, str(folder / "model.safetensors"),
              metadata={"format": "pt"})
    return folder


def load_hf(folder: Path):
    from transformers import DeepseekV3ForCausalLM
    from transformers.utils import logging
    logging.set_verbosity_error()  # the MTP layer is an "unexpected key" for HF; that is expected
    return DeepseekV3ForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


@pytest.fixture(autouse=True)
def _one_thread():
    # The machine's 2 cores are shared: multi-threaded BLAS on tiny matrices is 10-50x slower under load.
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="session")
def tiny_model(tiny_ckpt):
    from engine.native.models.deepseek_v3 import DeepseekV3Model
    return DeepseekV3Model.from_folder(tiny_ckpt)


@pytest.fixture(scope="session")
def predictable_ckpt(tmp_path_factory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("dsv3p"), seed=3, predictable=0.14, eos_token_id=None)


@pytest.fixture(scope="session")
def predictable_model(predictable_ckpt):
    from engine.native.models.deepseek_v3 import DeepseekV3Model
    return DeepseekV3Model.from_folder(predictable_ckpt)


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("dsv3"))


@pytest.fixture(scope="session")
def tiny_hf(tiny_ckpt):
    return load_hf(tiny_ckpt)


def write_tokenizer(folder: Path, vocab_size: int) -> None:
    """A word-level tokenizer ("t0".."tN", split on spaces) and a plain chat template, so the engine can run."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders
    tk = Tokenizer(models.WordLevel({f"t{i}": i for i in range(vocab_size)}, unk_token="t2"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tk.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tk.save(str(folder / "tokenizer.json"))
    template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template, "eos_token": "t1",
                                                              "bos_token": "t0"}))


@pytest.fixture()
def engine_cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def prompts_of(lengths, seed=1, vocab=97) -> list[list[int]]:
    """Random token prompts of the given lengths (ids 2.. so none is bos/eos)."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(2, vocab, (n,), generator=g).tolist() for n in lengths]


def build_engine(cls, folder, **kw):
    """LLMEngine or SpecLLMEngine over a tiny checkpoint: fp32, CPU, one thread, 4-token blocks."""
    kw.setdefault("kv_cache_gib", 0.005)
    kw.setdefault("dtype", "fp32")
    return cls(model=str(folder), device="cpu", threads=1, block_size=4, **kw)


def run_requests(engine, prompts, params, processors=None) -> list:
    """Add every prompt (params: one or one per prompt), step to the end; final RequestOutputs in order."""
    plist = params if isinstance(params, list) else [params] * len(prompts)
    procs = processors or [None] * len(prompts)
    ids = [engine.add_request(p, sp, logits_processor=f) for p, sp, f in zip(prompts, plist, procs)]
    done = {}
    while engine.has_unfinished():
        for o in engine.step().outputs:
            if o.finished:
                done[o.request_id] = o
    return [done[i] for i in ids]


@pytest.fixture()
def tiny_folder(tiny_ckpt, engine_cache_dir):
    write_tokenizer(tiny_ckpt, 97)
    return tiny_ckpt


@pytest.fixture()
def predictable_folder(predictable_ckpt, engine_cache_dir):
    write_tokenizer(predictable_ckpt, 97)
    return predictable_ckpt
