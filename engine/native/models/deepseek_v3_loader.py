"""DeepSeek-V3 checkpoint tensors -> our parameter names: FP8 block dequantisation, expert stacking, MTP layers."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import torch

from engine.base import EngineError
from engine.native.models.deepseek_v3_config import DeepseekV3Args

ATTN_WEIGHTS = ("q_a_proj", "q_b_proj", "q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj")
ATTN_NORMS = ("q_a_layernorm", "kv_a_layernorm")


def dequantize_fp8_block(w: torch.Tensor, scale_inv: torch.Tensor, block: tuple[int, int]) -> torch.Tensor:
    """float8_e4m3fn [out, in] x per-block scale_inv [ceil(out/bo), ceil(in/bi)] -> fp32 (DeepSeek's layout)."""
    out_f, in_f = w.shape
    bo, bi = block
    want = (-(-out_f // bo), -(-in_f // bi))
    if tuple(scale_inv.shape) != want:
        raise ValueError(f"scale shape {tuple(scale_inv.shape)} does not match weight {tuple(w.shape)} "
                         f"in {bo}x{bi} blocks (expected {want})")
    s = scale_inv.float().repeat_interleave(bo, 0)[:out_f].repeat_interleave(bi, 1)[:, :in_f]
    return w.float() * s


class TensorSource:
    """Named access to checkpoint tensors; a missing one fails naming it, FP8 weights come back dequantised."""

    def __init__(self, tensors: dict[str, torch.Tensor], args: DeepseekV3Args, source: str):
        self.tensors, self.args, self.source = tensors, args, source
        self.used: set[str] = set()

    def has(self, key: str) -> bool:
        return key in self.tensors

    def get(self, key: str) -> torch.Tensor:
        t = self.tensors.get(key)
        if t is None:
            raise EngineError(f"{self.source}: missing tensor {key!r}")
        self.used.add(key)
        if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            skey = key + "_scale_inv"
            if skey not in self.tensors:
                raise EngineError(f"{self.source}: missing tensor {skey!r} (scale of the FP8 weight {key!r})")
            self.used.add(skey)
            try:
                return dequantize_fp8_block(t, self.tensors[skey], self.args.fp8_block or (128, 128))
            except ValueError as e:
                raise EngineError(f"{self.source}: {key}: {e}") from None
        return t


def layer_state(src: TensorSource, prefix: str, ours: str, moe: bool) -> dict[str, torch.Tensor]:
    """One decoder layer's tensors under `prefix` (checkpoint) renamed to `ours` (module path)."""
    a = src.args
    g = src.get
    out = {f"{ours}input_layernorm": g(f"{prefix}input_layernorm.weight"),
           f"{ours}post_attention_layernorm": g(f"{prefix}post_attention_layernorm.weight")}
    names = ATTN_WEIGHTS[:2] if a.q_lora_rank else ATTN_WEIGHTS[2:3]
    for n in names + ATTN_WEIGHTS[3:]:
        out[f"{ours}self_attn.{n}"] = g(f"{prefix}self_attn.{n}.weight")
    for n in ATTN_NORMS if a.q_lora_rank else ATTN_NORMS[1:]:
        out[f"{ours}self_attn.{n}"] = g(f"{prefix}self_attn.{n}.weight")
    m = f"{prefix}mlp."
    if not moe:
        out[f"{ours}mlp.gate_up"] = torch.cat([g(m + "gate_proj.weight"), g(m + "up_proj.weight")])
        out[f"{ours}mlp.down_proj"] = g(m + "down_proj.weight")
        return out
    out[f"{ours}mlp.gate.weight"] = g(m + "gate.weight")
    out[f"{ours}mlp.gate.e_score_correction_bias"] = g(m + "gate.e_score_correction_bias")
    if src.has(m + "experts.gate_up_proj"):  # already stacked (HF 5.x in-memory layout)
        out[f"{ours}mlp.w_gate_up"] = g(m + "experts.gate_up_proj")
        out[f"{ours}mlp.w_down"] = g(m + "experts.down_proj")
    else:
        E = a.n_routed_experts
        out[f"{ours}mlp.w_gate_up"] = torch.stack([
            torch.cat([g(f"{m}experts.{e}.gate_proj.weight"), g(f"{m}experts.{e}.up_proj.weight")]) for e in range(E)])
        out[f"{ours}mlp.w_down"] = torch.stack([g(f"{m}experts.{e}.down_proj.weight") for e in range(E)])
    if a.n_shared_experts:
        s = m + "shared_experts."
        out[f"{ours}mlp.shared_experts.gate_up"] = torch.cat([g(s + "gate_proj.weight"), g(s + "up_proj.weight")])
        out[f"{ours}mlp.shared_experts.down_proj"] = g(s + "down_proj.weight")
    return out


def mtp_present(tensors: dict[str, torch.Tensor], args: DeepseekV3Args) -> bool:
    """True when the checkpoint carries the MTP layers its config declares (HF conversions often drop them)."""
    if not args.num_nextn_predict_layers:
        return False
    prefix = f"model.layers.{args.num_hidden_layers}."
    return any(k.startswith(prefix) for k in tensors)


def build_state(tensors: dict[str, torch.Tensor], args: DeepseekV3Args, source: str,
                convert: Callable[[str, torch.Tensor], torch.Tensor]) -> tuple[dict[str, torch.Tensor], int]:
    """All our parameters from checkpoint tensors; returns (state, number of MTP modules loaded)."""
    src = TensorSource(tensors, args, source)
    state: dict[str, torch.Tensor] = {}

    def put(d: dict[str, torch.Tensor]) -> None:
        for k, v in d.items():
            state[k] = convert(k, v)

    put({"embed_tokens": src.get("model.embed_tokens.weight"), "norm": src.get("model.norm.weight")})
    if not args.tie_word_embeddings:
        put({"lm_head": src.get("lm_head.weight")})
    for i in range(args.num_hidden_layers):
        put(layer_state(src, f"model.layers.{i}.", f"layers.{i}.", i >= args.first_k_dense_replace))
    n_mtp = args.num_nextn_predict_layers if mtp_present(tensors, args) else 0
    for k in range(n_mtp):
        p = f"model.layers.{args.num_hidden_layers + k}."
        # MTP blocks are MoE layers whatever first_k_dense_replace says (as in HF's get_mtp_config).
        put(layer_state(src, p, f"mtp.{k}.block.", True))
        put({f"mtp.{k}.enorm": src.get(p + "enorm.weight"), f"mtp.{k}.hnorm": src.get(p + "hnorm.weight"),
             f"mtp.{k}.eh_proj": src.get(p + "eh_proj.weight"),
             f"mtp.{k}.shared_head_norm": src.get(p + "shared_head.norm.weight")})
    return state, n_mtp


def read_folder(folder: str | Path) -> tuple[dict, dict[str, torch.Tensor]]:
    """config.json and every *.safetensors tensor of an HF-style folder."""
    from engine.native.hf_weights import read_hf_tensors
    folder = Path(folder)
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        raise EngineError(f"{folder}: no config.json")
    return json.loads(cfg_path.read_text()), read_hf_tensors(folder)
