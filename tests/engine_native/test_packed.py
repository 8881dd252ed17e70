"""oneDNN-packed bf16 matrices (packed_weights): used where they apply, and computing what F.linear computes."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from engine.native import packed_weights
from engine.native.attention import AttentionMetadata, PrefillChunk
from engine.native.llm_engine import LLMEngine

needs_onednn = pytest.mark.skipif(not packed_weights.available(torch.bfloat16, torch.device("cpu")),
                                  reason="this torch build or CPU has no oneDNN bf16 matmul")


@pytest.fixture(scope="module")
def bf16_engine():
    return LLMEngine("smollm2-135m", device="cpu", dtype="bf16", threads=1, kv_cache_gib=0.05)


@needs_onednn
@pytest.mark.parametrize("rows", [13, 64, 300])
def test_packed_matmul_rounds_like_f_linear(rows):
    g = torch.Generator().manual_seed(rows)
    w = (torch.randn(1536, 576, generator=g) / 24).bfloat16()
    x = torch.randn(rows, 576, generator=g).bfloat16()
    bias = torch.randn(1536, generator=g).bfloat16()
    ref = F.linear(x.float(), w.float(), bias.float())
    for b in (None, bias):
        ours = packed_weights.PackedLinear(w)(x, b)
        plain = F.linear(x, w, b)
        assert ours.dtype == torch.bfloat16 and ours.shape == (rows, 1536)
        want = ref if b is not None else ref - bias.float()
        # Only the order of the f32 sums may differ: both are within bf16 rounding of the exact product.
        assert (ours.float() - want).abs().max() <= 2 * (plain.float() - want).abs().max() + 1e-2


def test_fp32_engine_packs_nothing(llm32):
    assert llm32.engine.runner.packed_matrices == 0 and not llm32.engine.model.layers[0].packed


@needs_onednn
def test_bf16_step_logits_match_the_plain_path(bf16_engine, chat_ids):
    eng = bf16_engine
    if eng.model.layers[0].vnni:  # no AMX here: the VNNI forms serve these steps, nothing is packed twice
        assert eng.runner.packed_matrices == 0
        pytest.skip("steps past 12 rows take the VNNI path on this CPU (test_vnni.py)")
    assert set(eng.model.layers[0].packed) == {"qkv_w", "o_w", "gate_up_w", "down_w"}
    assert eng.runner.packed_matrices == 4 * len(eng.model.layers) + 1  # and the logits head
    ids = chat_ids[3][:40]  # 40 rows: past the int4 path's 12, so every matmul is a packed one
    n = len(ids)
    slots = torch.arange(16, 16 + n)  # past the null block; nothing else runs on this engine
    logits = {}
    try:
        for on in (True, False):
            packed_weights.set_enabled(on)
            with torch.inference_mode():
                attn = AttentionMetadata(slot_mapping=slots, prefills=[PrefillChunk(0, n, slots, None)])
                hidden = eng.model(torch.tensor(ids), torch.arange(n), attn)
                logits[on] = eng.model.compute_logits(hidden).float()
    finally:
        packed_weights.set_enabled(True)
    rel = ((logits[True] - logits[False]).norm(dim=-1) / logits[False].norm(dim=-1)).max()
    assert rel < 0.02, rel
    agree = (logits[True].argmax(-1) == logits[False].argmax(-1)).float().mean()
    assert agree >= 0.9, agree
