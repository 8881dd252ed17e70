"""Read a GGUF file: config, tokenizer metadata and dequantised tensors under HF parameter names."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.base import EngineError
from engine.native import int4_weights
from engine.native.config import ModelConfig

# llama.cpp's converter permutes Q/K rows into its interleaved rope layout for these architectures only (the
# Qwen families use the rotate-half "NEOX" rope as stored).
_PERMUTED_QK = {"llama"}

_LAYER_NAMES = {
    "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj", "attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm",
    # Qwen3-MoE: the router and the experts stacked into one 3-D tensor each
    "ffn_gate_inp": "mlp.gate", "ffn_gate_exps": "mlp.experts.gate_proj", "ffn_up_exps": "mlp.experts.up_proj",
    "ffn_down_exps": "mlp.experts.down_proj",
}
_GLOBAL_NAMES = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
                 "output.weight": "lm_head.weight"}


@dataclass
class GGUFContents:
    config: ModelConfig
    tokenizer: dict[str, Any]  # tokens, merges, token_type, bos/eos ids, pre, chat_template
    tensors: dict[str, torch.Tensor]


def _field(reader, key: str, default: Any = None) -> Any:
    f = reader.fields.get(key)
    if f is None:
        return default
    return f.contents()


def _open(path: Path):
    from gguf import GGUFReader
    try:
        return GGUFReader(str(path))
    except Exception as exc:  # the gguf package raises ValueError/struct errors on bad files
        raise EngineError(f"{path}: not a readable GGUF file ({exc})") from exc


def read_gguf_config(path: Path) -> tuple[ModelConfig, dict[str, Any], Any]:
    """Parse metadata only (fast); returns config, tokenizer metadata and the open reader."""
    from engine.native.models import check_architecture, family_of
    reader = _open(path)
    arch = _field(reader, "general.architecture")
    check_architecture(arch, str(path))
    family = family_of(arch)
    p = arch + "."
    n_heads = int(_field(reader, p + "attention.head_count"))
    hidden = int(_field(reader, p + "embedding_length"))
    tokens = _field(reader, "tokenizer.ggml.tokens") or []
    names = {t.name for t in reader.tensors}
    eos = _field(reader, "tokenizer.ggml.eos_token_id")
    eot = _field(reader, "tokenizer.ggml.eot_token_id")
    window = _field(reader, p + "attention.sliding_window")
    config = ModelConfig(
        architecture=family,
        vocab_size=int(_field(reader, p + "vocab_size", len(tokens))),
        hidden_size=hidden,
        intermediate_size=int(_field(reader, p + "feed_forward_length")),
        num_layers=int(_field(reader, p + "block_count")),
        num_heads=n_heads,
        num_kv_heads=int(_field(reader, p + "attention.head_count_kv", n_heads)),
        head_dim=int(_field(reader, p + "attention.key_length", hidden // n_heads)),
        rope_theta=float(_field(reader, p + "rope.freq_base", 10000.0)),
        rms_norm_eps=float(_field(reader, p + "attention.layer_norm_rms_epsilon", 1e-5)),
        max_position=int(_field(reader, p + "context_length", 2048)),
        tie_embeddings="output.weight" not in names,
        qkv_bias="blk.0.attn_q.bias" in names,
        qk_norm="blk.0.attn_q_norm.weight" in names,
        sliding_window=int(window) if window else None,
        bos_token_id=_field(reader, "tokenizer.ggml.bos_token_id"),
        eos_token_ids=tuple(sorted({int(t) for t in (eos, eot) if t is not None})),
        extra=_moe_fields(reader, p, names),
    )
    tok = {
        "model": _field(reader, "tokenizer.ggml.model"),
        "pre": _field(reader, "tokenizer.ggml.pre"),
        "tokens": tokens,
        "merges": _field(reader, "tokenizer.ggml.merges") or [],
        "token_type": _field(reader, "tokenizer.ggml.token_type") or [],
        "bos_token_id": config.bos_token_id,
        "eos_token_id": eos,
        "add_bos_token": bool(_field(reader, "tokenizer.ggml.add_bos_token", False)),
        "chat_template": _field(reader, "tokenizer.chat_template"),
    }
    return config, tok, reader


def _moe_fields(reader, prefix: str, names: set[str]) -> dict:
    """Qwen3-MoE's expert settings from llama.cpp's keys (llama.cpp always renormalises its top-k weights)."""
    experts = _field(reader, prefix + "expert_count")
    if not experts:
        return {}
    layers = int(_field(reader, prefix + "block_count"))
    return {"moe": {"num_experts": int(experts), "top_k": int(_field(reader, prefix + "expert_used_count")),
                    "moe_intermediate_size": int(_field(reader, prefix + "expert_feed_forward_length")),
                    "norm_topk_prob": bool(_field(reader, prefix + "expert_weights_norm", True)),
                    "sparse_layers": [i for i in range(layers) if f"blk.{i}.ffn_gate_inp.weight" in names]}}


def _unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    # Inverse of llama.cpp convert_hf_to_gguf.py `permute`, back to HF's rotate-half row order.
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _hf_name(name: str) -> str | None:
    if name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[name]
    m = re.fullmatch(r"blk\.(\d+)\.(\w+)\.(weight|bias)", name)
    if not m or m.group(2) not in _LAYER_NAMES:
        return None
    return f"model.layers.{m.group(1)}.{_LAYER_NAMES[m.group(2)]}.{m.group(3)}"


def read_gguf(path: Path) -> GGUFContents:
    """Dequantise every tensor into float32 torch tensors named as in HF checkpoints. 4-bit matrices also keep
    their codes, scales and zeros (see int4_weights), under the tensor's name plus int4_weights.SUFFIXES."""
    from gguf import GGMLQuantizationType, quants
    config, tok, reader = read_gguf_config(path)
    permute = _field(reader, "general.architecture") in _PERMUTED_QK
    tensors: dict[str, torch.Tensor] = {}
    for t in reader.tensors:
        name = _hf_name(t.name)
        if name is None:
            continue  # rope_freqs and other derived tensors are recomputed
        shape = tuple(int(s) for s in reversed(t.shape))
        if t.tensor_type in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
            arr = np.asarray(t.data).astype(np.float32).reshape(shape)
        else:
            try:
                arr = quants.dequantize(t.data, t.tensor_type).reshape(shape)
            except NotImplementedError as exc:
                raise EngineError(f"{path}: tensor {t.name} uses {t.tensor_type.name}, which cannot be dequantised "
                                  f"by this gguf package") from exc
        heads = None
        if permute and name.endswith(("q_proj.weight", "q_proj.bias")):
            heads = config.num_heads
        elif permute and name.endswith(("k_proj.weight", "k_proj.bias")):
            heads = config.num_kv_heads
        if heads:
            arr = _unpermute(arr, heads)
        tensors[name] = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float32))
        if t.tensor_type.name in ("Q4_0", "Q4_1") and len(shape) == 2 and name != "model.embed_tokens.weight":
            parts = int4_weights.from_gguf_blocks(np.asarray(t.data), t.tensor_type.name)
            for suffix, part in zip(int4_weights.SUFFIXES, parts):
                # The rope row permutation moves whole rows, so it applies to every part alike.
                tensors[name + suffix] = torch.from_numpy(np.ascontiguousarray(_unpermute(part.numpy(), heads))) \
                    if heads else part
    return GGUFContents(config=config, tokenizer=tok, tensors=tensors)
