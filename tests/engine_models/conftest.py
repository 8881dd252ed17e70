"""Tiny random-weight checkpoints of each family, written by `transformers` itself, and the HF reference output."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from engine.native.gguf_export import write_gguf
from tests.engine_deepseek.conftest import _randomise, write_tokenizer

VOCAB = 128
COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-6, bos_token_id=0,
              eos_token_id=None)
# Each family with the setting that sets it apart: q/k/v biases and untied head (Qwen2), per-head q/k norms with a
# head_dim that is not hidden / heads (Qwen3), experts with one dense layer (Qwen3-MoE), a window of 8 tokens,
# shorter than every test sequence (Mistral).
FAMILIES = {
    "qwen2": ("Qwen2ForCausalLM", dict(tie_word_embeddings=False, rope_theta=1e6)),
    "qwen3": ("Qwen3ForCausalLM", dict(head_dim=32, tie_word_embeddings=True, rope_theta=1e6)),
    "qwen3moe": ("Qwen3MoeForCausalLM", dict(head_dim=16, num_experts=4, num_experts_per_tok=2,
                                             moe_intermediate_size=32, norm_topk_prob=True, mlp_only_layers=[1])),
    "mistral": ("MistralForCausalLM", dict(sliding_window=8, tie_word_embeddings=False, head_dim=16)),
}
GGUF_FAMILY = {"qwen2": "qwen2", "qwen3": "qwen3", "qwen3moe": "qwen3moe", "mistral": "llama"}


def make_family(folder: Path, family: str, seed: int = 0, **overrides) -> Path:
    """config.json + model.safetensors (HF's own save) + a word-level tokenizer, for one family."""
    import transformers
    arch, extra = FAMILIES[family]
    cfg = getattr(transformers, arch.replace("ForCausalLM", "Config"))(**{**COMMON, **extra, **overrides})
    torch.manual_seed(seed)
    model = getattr(transformers, arch)(cfg).eval()
    _randomise(model, seed)
    model.save_pretrained(folder)
    write_tokenizer(folder, VOCAB)
    return folder


def to_gguf(folder: Path, family: str, matrix_type: str = "F32") -> Path:
    from safetensors.torch import load_file
    config = json.loads((folder / "config.json").read_text())
    path = folder.parent / f"{folder.name}-{matrix_type}.gguf"
    return write_gguf(path, GGUF_FAMILY[family], config, load_file(str(folder / "model.safetensors")), matrix_type)


def load_hf(folder: Path):
    import transformers
    return transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()


def hf_greedy(model, prompt: list[int], n: int) -> tuple[list[int], torch.Tensor]:
    """HF's greedy tokens after `prompt` and the raw logits row before each of them [n, vocab]."""
    with torch.inference_mode():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                             output_logits=True, return_dict_in_generate=True, pad_token_id=0)
    return out.sequences[0, len(prompt):].tolist(), torch.cat(out.logits).float()


@pytest.fixture(scope="session", params=sorted(FAMILIES))
def family_ckpt(request, tmp_path_factory) -> tuple[str, Path]:
    family = request.param
    return family, make_family(tmp_path_factory.mktemp(family) / "model", family)


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
