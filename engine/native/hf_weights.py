"""Read an HF model folder: config.json, *.safetensors and tokenizer files."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from engine.base import EngineError
from engine.native.config import ModelConfig


def read_hf_config(folder: Path) -> ModelConfig:
    from engine.native.models import check_architecture, family_of
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        raise EngineError(f"{folder}: no config.json; expected an HF model folder or a .gguf file")
    cfg = json.loads(cfg_path.read_text())
    archs = cfg.get("architectures") or [cfg.get("model_type", "?")]
    check_architecture(archs[0], str(cfg_path))
    arch = family_of(archs[0])
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
        qk_norm=arch in ("qwen3", "qwen3moe"),
        sliding_window=_sliding_window(cfg),
        sliding_layers=_sliding_layers(cfg),
        bos_token_id=cfg.get("bos_token_id"),
        eos_token_ids=tuple(int(e) for e in eos_ids),
        # models with more fields (DeepSeek-V3 MLA/MoE) parse the raw config; Qwen-style MoE sizes are read here
        extra={"hf_config": cfg, **({"moe": _qwen_moe(cfg)} if arch == "qwen3moe" else {})},
    )


def _sliding_window(cfg: dict) -> int | None:
    # Qwen2/Qwen3 configs carry a window that is off unless use_sliding_window says so; Mistral's is on when set.
    window = cfg.get("sliding_window")
    return int(window) if window and cfg.get("use_sliding_window", True) else None


def _sliding_layers(cfg: dict) -> tuple[int, ...] | None:
    types = cfg.get("layer_types")
    if types:
        return tuple(i for i, t in enumerate(types) if t == "sliding_attention")
    if "max_window_layers" in cfg:  # older Qwen configs: layers from max_window_layers on slide
        return tuple(range(int(cfg["max_window_layers"]), int(cfg["num_hidden_layers"])))
    return None


def _qwen_moe(cfg: dict) -> dict:
    """Qwen3-MoE's routed-expert settings; layers listed in mlp_only_layers or off decoder_sparse_step are dense."""
    step, dense = int(cfg.get("decoder_sparse_step", 1)), set(cfg.get("mlp_only_layers") or [])
    # transformers 5 writes num_local_experts; the published checkpoints say num_experts
    experts = cfg.get("num_experts") or cfg["num_local_experts"]
    return {"num_experts": int(experts), "top_k": int(cfg["num_experts_per_tok"]),
            "moe_intermediate_size": int(cfg["moe_intermediate_size"]),
            "norm_topk_prob": bool(cfg.get("norm_topk_prob", False)),
            "sparse_layers": [i for i in range(int(cfg["num_hidden_layers"]))
                              if i not in dense and (i + 1) % step == 0]}


def read_hf_tensors(folder: str | Path) -> dict[str, torch.Tensor]:
    """Every tensor of a folder's *.safetensors files (the one folder reader: HF models, DeepSeek, vision)."""
    from safetensors.torch import load_file
    folder = Path(folder)
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise EngineError(f"{folder}: no *.safetensors files (other weight formats are not supported)")
    tensors: dict[str, torch.Tensor] = {}
    for f in files:
        tensors.update(load_file(str(f)))
    return tensors
