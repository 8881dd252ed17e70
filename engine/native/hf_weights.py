"""Read an HF model folder: config.json, *.safetensors and tokenizer files."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from engine.base import EngineError
from engine.native.config import ModelConfig

# HF `architectures[0]` -> our family name.
HF_ARCHITECTURES = {"LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2", "MistralForCausalLM": "llama"}


def read_hf_config(folder: Path) -> ModelConfig:
    from engine.native.models import check_architecture
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        raise EngineError(f"{folder}: no config.json; expected an HF model folder or a .gguf file")
    cfg = json.loads(cfg_path.read_text())
    archs = cfg.get("architectures") or [cfg.get("model_type", "?")]
    arch = HF_ARCHITECTURES.get(archs[0], archs[0])
    check_architecture(arch, str(cfg_path))
    n_heads = cfg["num_attention_heads"]
    eos = cfg.get("eos_token_id")
    eos_ids = tuple(eos) if isinstance(eos, list) else ((eos,) if eos is not None else ())
    return ModelConfig(
        architecture=arch,
        vocab_size=cfg["vocab_size"],
        hidden_size=cfg["hidden_size"],
        intermediate_size=cfg["intermediate_size"],
        num_layers=cfg["num_hidden_layers"],
        num_heads=n_heads,
        num_kv_heads=cfg.get("num_key_value_heads", n_heads),
        head_dim=cfg.get("head_dim") or cfg["hidden_size"] // n_heads,
        rope_theta=float(cfg.get("rope_theta", (cfg.get("rope_parameters") or {}).get("rope_theta", 10000.0))),
        rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-5)),
        max_position=int(cfg.get("max_position_embeddings", 2048)),
        tie_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        qkv_bias=bool(cfg.get("attention_bias", arch == "qwen2")),
        bos_token_id=cfg.get("bos_token_id"),
        eos_token_ids=tuple(int(e) for e in eos_ids),
        extra={"hf_config": cfg},  # models with more fields (DeepSeek-V3 MLA/MoE) parse the raw config
    )


def read_hf_tensors(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise EngineError(f"{folder}: no *.safetensors files (other weight formats are not supported)")
    tensors: dict[str, torch.Tensor] = {}
    for f in files:
        tensors.update(load_file(str(f)))
    return tensors
