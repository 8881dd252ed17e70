"""DeepSeek-V3 model math against HF transformers on the same tiny checkpoint (fp32)."""
from __future__ import annotations

import pytest
import torch

from tests.engine_deepseek.conftest import rel_err
from engine.native.attention import AttentionMetadata, PrefillChunk
from engine.native.models import deepseek_v3_mla


def _prefill_logits(model, ids: torch.Tensor) -> torch.Tensor:
    n = ids.shape[0]
    model.bind_kv_cache([(torch.zeros(n, model.args.latent_width), None)
                         for _ in range(model.args.num_hidden_layers + model.num_mtp)])
    attn = AttentionMetadata(slot_mapping=torch.arange(n), prefills=[PrefillChunk(0, n, torch.arange(n), None)])
    with torch.no_grad():
        return model.compute_logits(model(ids, torch.arange(n), attn))


@pytest.mark.parametrize("absorbed", [False, True], ids=["expanded", "absorbed"])
def test_prefill_logits_match_hf(tiny_model, tiny_hf, monkeypatch, absorbed):
    monkeypatch.setattr(deepseek_v3_mla, "ABSORB_MAX_QUERIES", 10_000 if absorbed else 0)
    ids = torch.randint(0, tiny_model.args.vocab_size, (37,), generator=torch.Generator().manual_seed(5))
    ours = _prefill_logits(tiny_model, ids)
    with torch.no_grad():
        ref = tiny_hf(ids[None]).logits[0]
    assert ref.std() > 0.5  # well-separated logits, so the comparison means something
    assert rel_err(ours, ref) < 1e-4


def test_yarn_scaling_is_applied(tiny_model):
    # The fixture's yarn has factor 4 and mscale_all_dim 0.707: both the rope frequencies and softmax scale move.
    a = tiny_model.args
    assert a.rope["rope_type"] == "yarn"
    assert abs(a.softmax_scale() - a.qk_head_dim ** -0.5) > 1e-3
    plain = 1.0 / (a.rope["rope_theta"] ** (torch.arange(0, a.qk_rope_head_dim, 2).float() / a.qk_rope_head_dim))
    assert not torch.allclose(tiny_model.inv_freq, plain)


def test_routing_picks_hf_experts(tiny_model, tiny_hf):
    x = torch.randn(257, tiny_model.args.hidden_size, generator=torch.Generator().manual_seed(7))
    for layer in range(tiny_model.args.first_k_dense_replace, tiny_model.args.num_hidden_layers):
        w, idx = tiny_model.layers[layer].mlp.gate(x)
        with torch.no_grad():
            _, hw, hidx = tiny_hf.model.layers[layer].mlp.gate(x)
        ours, order = idx.sort(-1)
        theirs, horder = hidx.sort(-1)
        assert torch.equal(ours, theirs)
        torch.testing.assert_close(w.gather(1, order), hw.gather(1, horder), rtol=1e-5, atol=1e-6)
        # The correction bias must change some choices, or this test would not cover it.
        bias = tiny_model.layers[layer].mlp.gate.e_score_correction_bias
        assert bias.abs().max() > 0


def test_moe_layer_matches_hf(tiny_model, tiny_hf):
    x = torch.randn(64, tiny_model.args.hidden_size, generator=torch.Generator().manual_seed(8))
    layer = tiny_model.args.first_k_dense_replace
    with torch.no_grad():
        ours = tiny_model.layers[layer].mlp(x)
        ref = tiny_hf.model.layers[layer].mlp(x[None])[0]
    assert rel_err(ours, ref) < 1e-5


def test_latent_cache_is_smaller_than_full_kv(tiny_model):
    a = tiny_model.args
    b = tiny_model.kv_bytes_per_token(torch.bfloat16)
    assert b["latent"] == a.num_hidden_layers * (a.kv_lora_rank + a.qk_rope_head_dim) * 2
    assert b["full_kv"] == a.num_hidden_layers * a.num_attention_heads * (a.qk_head_dim + a.v_head_dim) * 2
    assert b["full_kv"] / b["latent"] == pytest.approx(4 * (24 + 12) / 24)


def _hf_mtp(hf, ckpt):
    """HF's own MTP layer (transformers.modeling_layers.MtpModel) with the checkpoint's model.layers.{N}.*
    weights mapped by hand: HF's loader only looks for DeepSeek-V3's layer 61."""
    mtp_mod = pytest.importorskip("transformers.modeling_layers")
    if not hasattr(mtp_mod, "MtpModel"):
        pytest.skip("this transformers has no MtpModel")
    from safetensors.torch import load_file
    sd = load_file(str(ckpt / "model.safetensors"))
    n, E = hf.config.num_hidden_layers, hf.config.n_routed_experts
    pre = f"model.layers.{n}."
    m = {}
    for k, v in sd.items():
        if not k.startswith(pre) or ".experts." in k or k.startswith((pre + "embed_tokens", pre + "shared_head.head")):
            continue
        r = k[len(pre):]
        if r in ("enorm.weight", "hnorm.weight", "eh_proj.weight"):
            m["layers.0." + r] = v
        elif r == "shared_head.norm.weight":
            m["layers.0.post_norm.weight"] = v
        else:
            m["layers.0.mtp_block." + r] = v
    x = f"{pre}mlp.experts."
    m["layers.0.mtp_block.mlp.experts.gate_up_proj"] = torch.stack(
        [torch.cat([sd[f"{x}{e}.gate_proj.weight"], sd[f"{x}{e}.up_proj.weight"]]) for e in range(E)])
    m["layers.0.mtp_block.mlp.experts.down_proj"] = torch.stack([sd[f"{x}{e}.down_proj.weight"] for e in range(E)])
    mtp = mtp_mod.MtpModel(hf, 1).eval()
    res = mtp.load_state_dict(m, strict=False)
    assert set(res.missing_keys) <= {"embed_tokens.weight", "shared_head.weight"} and not res.unexpected_keys
    return mtp


def test_mtp_module_matches_hf_mtp_layer(tiny_model, tiny_hf, tiny_ckpt):
    """Draft logits at positions 0..n-2 from (token i+1, main hidden i), against HF's MtpLayer."""
    mtp = _hf_mtp(tiny_hf, tiny_ckpt)
    ids = torch.randint(0, 97, (1, 20), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        h = tiny_hf.model(ids).last_hidden_state
        ref = tiny_hf.lm_head(mtp.forward_layer(0, h[:, :-1], torch.arange(19)[None], None, input_ids=ids[:, 1:]))[0]
    n_layers = tiny_model.args.num_hidden_layers + tiny_model.num_mtp
    tiny_model.bind_kv_cache([(torch.zeros(20, tiny_model.args.latent_width), None) for _ in range(n_layers)])
    with torch.no_grad():
        hm = tiny_model(ids[0], torch.arange(20), AttentionMetadata(
            slot_mapping=torch.arange(20), prefills=[PrefillChunk(0, 20, torch.arange(20), None)]))
        g = tiny_model.mtp_forward(0, ids[0, 1:], torch.arange(19), hm[:-1], AttentionMetadata(
            slot_mapping=torch.arange(19), prefills=[PrefillChunk(0, 19, torch.arange(19), None)]))
        ours = tiny_model.mtp_logits(0, g)
    assert rel_err(ours, ref) < 1e-4


@pytest.mark.parametrize("variant", [
    {"q_lora_rank": None},
    {"rope_interleave": False, "rope_parameters": {"rope_type": "default", "rope_theta": 50000.0}},
    {"n_group": 1, "topk_group": 1, "norm_topk_prob": False, "n_shared_experts": 2, "first_k_dense_replace": 0},
], ids=["no-q-lora", "plain-rope-no-interleave", "ungrouped-unnormalised-2-shared"])
def test_config_variants_match_hf(tmp_path, monkeypatch, variant):
    from tests.engine_deepseek.conftest import load_hf, make_checkpoint
    from engine.native.models.deepseek_v3 import DeepseekV3Model
    folder = make_checkpoint(tmp_path, mtp=False, **variant)
    ours, hf = DeepseekV3Model.from_folder(folder), load_hf(folder)
    ids = torch.randint(0, 97, (30,), generator=torch.Generator().manual_seed(6))
    for absorb in (0, 10_000):  # expanded and absorbed attention
        monkeypatch.setattr(deepseek_v3_mla, "ABSORB_MAX_QUERIES", absorb)
        got = _prefill_logits(ours, ids)
        with torch.no_grad():
            assert rel_err(got, hf(ids[None]).logits[0]) < 1e-4
