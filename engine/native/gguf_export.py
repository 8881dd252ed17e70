"""Write HF-layout weights as a GGUF file under llama.cpp's tensor names and metadata keys (tests, benchmarks).

Covers the families gguf_weights reads back: `llama` (Llama, Mistral; Q/K rows permuted into llama.cpp's rope
layout), `qwen2`, `qwen3` and `qwen3moe`. Matrices can be stored as F32, F16, Q8_0 or Q4_0; norms, biases and the
router stay F32, as llama.cpp's converter keeps them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from engine.native.gguf_weights import _GLOBAL_NAMES, _LAYER_NAMES

# ModelConfig family -> GGUF general.architecture
GGUF_ARCH = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "qwen3moe": "qwen3moe"}
_HF_TO_GGUF_LAYER = {hf: gg for gg, hf in _LAYER_NAMES.items()}
_HF_TO_GGUF_GLOBAL = {hf: gg for gg, hf in _GLOBAL_NAMES.items()}


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    # HF's rotate-half row order -> llama.cpp's interleaved pairs (gguf_weights._unpermute undoes it).
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _gguf_name(hf_name: str) -> str | None:
    if hf_name in _HF_TO_GGUF_GLOBAL:
        return _HF_TO_GGUF_GLOBAL[hf_name]
    parts = hf_name.split(".")  # model.layers.{i}.<module path>.{weight|bias}
    if parts[:2] != ["model", "layers"]:
        return None
    module = ".".join(parts[3:-1])
    if module not in _HF_TO_GGUF_LAYER:
        return None
    return f"blk.{parts[2]}.{_HF_TO_GGUF_LAYER[module]}.{parts[-1]}"


def _expert_tensors(hf: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """HF's one matrix per expert -> one stacked [E, out, in] tensor per layer and kind, as llama.cpp stores them."""
    out, groups = {}, {}
    for name, t in hf.items():
        parts = name.split(".")
        if "experts" in parts and parts[parts.index("experts") + 1].isdigit():
            i = parts.index("experts")
            key = ".".join(parts[:i + 1] + parts[i + 2:])
            groups.setdefault(key, {})[int(parts[i + 1])] = t
        else:
            out[name] = t
    for key, by_expert in groups.items():
        out[key] = torch.stack([by_expert[e] for e in sorted(by_expert)])
    return out


def write_gguf(path: Path, family: str, hf_config: dict, tensors: dict[str, torch.Tensor],
               matrix_type: str = "F32") -> Path:
    """Write `tensors` (HF names, as a checkpoint holds them) and `hf_config` (config.json) as a GGUF file with a
    placeholder tokenizer of vocab_size tokens "0".."N" (needs vocab_size > 10). matrix_type: F32, F16, Q8_0 or Q4_0."""
    from gguf import GGMLQuantizationType, GGUFWriter, quants
    c = hf_config
    arch = GGUF_ARCH[family]
    heads, kv_heads = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    head_dim = c.get("head_dim") or c["hidden_size"] // heads
    w = GGUFWriter(str(path), arch)
    w.add_block_count(c["num_hidden_layers"])
    w.add_context_length(c.get("max_position_embeddings", 2048))
    w.add_embedding_length(c["hidden_size"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    theta = c.get("rope_theta") or (c.get("rope_parameters") or {}).get("rope_theta", 10000.0)
    w.add_rope_freq_base(float(theta))
    w.add_layer_norm_rms_eps(float(c.get("rms_norm_eps", 1e-6)))
    if c.get("sliding_window") and c.get("use_sliding_window", True):
        w.add_sliding_window(int(c["sliding_window"]))
    if family == "qwen3moe":
        w.add_expert_count(c.get("num_experts") or c["num_local_experts"])
        w.add_expert_used_count(c["num_experts_per_tok"])
        w.add_expert_feed_forward_length(c["moe_intermediate_size"])
        w.add_expert_weights_norm(bool(c.get("norm_topk_prob", False)))
    vocab = c["vocab_size"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list([str(i) for i in range(vocab)])
    w.add_token_types([1] * vocab)
    # One merge ("1" + "0" -> "10", all three in the vocabulary): llama.cpp refuses a "gpt2" vocabulary without a
    # merges key, and the writer drops an empty list.
    w.add_token_merges(["1 0"])
    if c.get("eos_token_id") is not None:
        w.add_eos_token_id(int(c["eos_token_id"]))
    qtype = GGMLQuantizationType[matrix_type]
    for name, t in _expert_tensors(tensors).items():
        gname = _gguf_name(name)
        if gname is None:
            continue
        arr = t.float().numpy()
        if arch == "llama" and name.endswith(("q_proj.weight", "q_proj.bias")):
            arr = _permute(arr, heads)
        elif arch == "llama" and name.endswith(("k_proj.weight", "k_proj.bias")):
            arr = _permute(arr, kv_heads)
        keep_f32 = arr.ndim == 1 or gname.endswith("ffn_gate_inp.weight") or qtype == GGMLQuantizationType.F32
        if keep_f32:
            w.add_tensor(gname, np.ascontiguousarray(arr, dtype=np.float32))
        elif qtype == GGMLQuantizationType.F16:
            w.add_tensor(gname, np.ascontiguousarray(arr, dtype=np.float16))
        else:
            w.add_tensor(gname, quants.quantize(np.ascontiguousarray(arr, dtype=np.float32), qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
