"""Checkpoint loading: FP8 block-scaled weights, and bad checkpoints that must fail naming the problem."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from tests.engine_deepseek.conftest import load_hf, make_checkpoint, rel_err
from engine.base import EngineError
from engine.native.models.deepseek_v3 import DeepseekV3Model
from engine.native.models.deepseek_v3_loader import dequantize_fp8_block


def _quantize_fp8(w: torch.Tensor, block: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """DeepSeek's layout: per 128x128 block, scale_inv = amax / 448, weight = w / scale_inv in e4m3."""
    o, i = w.shape
    so, si = -(-o // block), -(-i // block)
    scale = torch.empty(so, si)
    q = torch.empty(o, i, dtype=torch.float8_e4m3fn)
    for a in range(so):
        for b in range(si):
            blk = w[a * block:(a + 1) * block, b * block:(b + 1) * block]
            s = blk.abs().max().clamp_min(1e-12) / 448.0
            scale[a, b] = s
            q[a * block:(a + 1) * block, b * block:(b + 1) * block] = (blk / s).to(torch.float8_e4m3fn)
    return q, scale


def test_dequantize_partial_blocks():
    w = torch.randn(200, 300)
    q, s = _quantize_fp8(w)
    assert s.shape == (2, 3)
    d = dequantize_fp8_block(q, s, (128, 128))
    assert d.shape == w.shape
    assert torch.equal(d[130:, 260:], q[130:, 260:].float() * s[1, 2])
    assert rel_err(d, w) < 0.05  # e4m3 keeps ~3 mantissa bits


def test_fp8_checkpoint_matches_hf_on_dequantised_weights(tmp_path):
    # hidden 160 and experts of 136 rows: full and partial 128-blocks on both axes.
    src = make_checkpoint(tmp_path / "src", hidden_size=160, moe_intermediate_size=136, intermediate_size=200)
    state = load_file(str(src / "model.safetensors"))
    fp8, deq = {}, {}
    for k, v in state.items():
        if v.dim() == 2 and "embed" not in k and "lm_head" not in k and ".gate.weight" not in k:
            q, s = _quantize_fp8(v)
            fp8[k], fp8[k + "_scale_inv"] = q, s
            deq[k] = dequantize_fp8_block(q, s, (128, 128))
        else:
            fp8[k] = deq[k] = v
    cfg = json.loads((src / "config.json").read_text())
    for name, tensors, extra in (("fp8", fp8, {"quantization_config": {
            "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}}),
            ("ref", deq, {})):
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps({**cfg, **extra}))
        save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})
    ours = DeepseekV3Model.from_folder(tmp_path / "fp8")
    assert ours.layers[1].mlp.w_gate_up.dtype == torch.float32
    hf = load_hf(tmp_path / "ref")
    ids = torch.randint(0, 97, (1, 12), generator=torch.Generator().manual_seed(2))
    from tests.engine_deepseek.test_deepseek_model import _prefill_logits
    with torch.no_grad():
        assert rel_err(_prefill_logits(ours, ids[0]), hf(ids).logits[0]) < 1e-4


def _broken(tiny_ckpt: Path, tmp_path: Path, drop: str | None = None, config_extra: dict | None = None) -> Path:
    d = tmp_path / "broken"
    d.mkdir()
    state = load_file(str(tiny_ckpt / "model.safetensors"))
    if drop:
        del state[drop]
    save_file(state, str(d / "model.safetensors"), metadata={"format": "pt"})
    cfg = json.loads((tiny_ckpt / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**cfg, **(config_extra or {})}))
    return d


@pytest.mark.parametrize("name", ["model.layers.2.mlp.experts.5.up_proj.weight",
                                  "model.layers.0.self_attn.kv_b_proj.weight",
                                  "model.layers.1.mlp.gate.e_score_correction_bias",
                                  "model.layers.3.eh_proj.weight", "lm_head.weight"])
def test_missing_tensor_is_named(tiny_ckpt, tmp_path, name):
    with pytest.raises(EngineError, match=f"missing tensor '{name}'"):
        DeepseekV3Model.from_folder(_broken(tiny_ckpt, tmp_path, drop=name))


def test_missing_fp8_scale_is_named(tiny_ckpt, tmp_path):
    d = _broken(tiny_ckpt, tmp_path, config_extra={"quantization_config": {"quant_method": "fp8"}})
    state = load_file(str(d / "model.safetensors"))
    state["model.layers.0.self_attn.o_proj.weight"] = state["model.layers.0.self_attn.o_proj.weight"].to(
        torch.float8_e4m3fn)
    save_file(state, str(d / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(EngineError, match="missing tensor 'model.layers.0.self_attn.o_proj.weight_scale_inv'"):
        DeepseekV3Model.from_folder(d)


def test_unknown_config_field_is_named(tiny_ckpt, tmp_path):
    with pytest.raises(EngineError, match="unknown config field.*'index_topk'"):
        DeepseekV3Model.from_folder(_broken(tiny_ckpt, tmp_path, config_extra={"index_topk": 2048}))


@pytest.mark.parametrize("field,value", [("scoring_func", "softmax"), ("hidden_act", "gelu"),
                                         ("topk_method", "greedy")])
def test_unsupported_config_value_is_named(tiny_ckpt, tmp_path, field, value):
    with pytest.raises(EngineError, match=f"'{field}'='{value}' is not supported"):
        DeepseekV3Model.from_folder(_broken(tiny_ckpt, tmp_path, config_extra={field: value}))


def test_checkpoint_without_mtp_loads(tmp_path):
    # That such a model cannot speculate is test_deepseek_engine.test_spec_engine_refuses_checkpoint_without_mtp.
    model = DeepseekV3Model.from_folder(make_checkpoint(tmp_path, mtp=False))
    assert model.num_mtp == 0


# DeepSeek-V3's released config.json (deepseek-ai/DeepSeek-V3, minus auto_map's class paths).
DEEPSEEK_V3_CONFIG = {
    "architectures": ["DeepseekV3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "auto_map": {}, "aux_loss_alpha": 0.001, "bos_token_id": 0, "eos_token_id": 1, "ep_size": 1,
    "first_k_dense_replace": 3, "hidden_act": "silu", "hidden_size": 7168, "initializer_range": 0.02,
    "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840, "model_type": "deepseek_v3",
    "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256,
    "n_shared_experts": 1, "norm_topk_prob": True, "num_attention_heads": 128, "num_experts_per_tok": 8,
    "num_hidden_layers": 61, "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "pretraining_tp": 1,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128]},
    "rms_norm_eps": 1e-06, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
                                            "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096,
                                            "type": "yarn"},
    "rope_theta": 10000, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "seq_aux": True,
    "tie_word_embeddings": False, "topk_group": 4, "topk_method": "noaux_tc", "torch_dtype": "bfloat16",
    "transformers_version": "4.33.1", "use_cache": True, "v_head_dim": 128, "vocab_size": 129280,
}


def test_released_deepseek_v3_config_parses():
    import math
    from engine.native.models.deepseek_v3_config import parse_config
    a = parse_config(DEEPSEEK_V3_CONFIG)
    assert a.fp8_block == (128, 128) and a.rope["rope_type"] == "yarn" and a.num_nextn_predict_layers == 1
    assert a.latent_width == 576 and a.num_hidden_layers * a.latent_width * 2 == 70_272  # bf16 bytes/token
    m = 0.1 * math.log(40) + 1
    assert a.softmax_scale() == pytest.approx(192 ** -0.5 * m * m)
