"""4-bit GGUF matrices read with torch's int4 kernel, and decode attention that reads whole KV blocks."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.base import EngineError, SamplingParams
from engine.native import LLM, int4_weights
from engine.native.attention import AttentionMetadata, PrefillChunk
from engine.native.llm_engine import LLMEngine

needs_kernel = pytest.mark.skipif(not int4_weights.available(), reason="this torch build has no CPU int4 kernel")


@pytest.fixture(scope="module")
def reader(model_path):
    from gguf import GGUFReader
    return GGUFReader(str(model_path))


def _tensor(reader, name):
    return next(t for t in reader.tensors if t.name == name)


def test_q4_1_codes_stand_for_the_files_dequantised_matrix(reader):
    from gguf import quants
    t = _tensor(reader, "blk.3.ffn_down.weight")
    parts = int4_weights.from_gguf_blocks(np.asarray(t.data), t.tensor_type.name)
    ref = torch.from_numpy(quants.dequantize(t.data, t.tensor_type).reshape(parts[0].shape[0], -1))
    ours = int4_weights.dequantize(*parts)
    assert ours.shape == ref.shape == (576, 1536)
    # (q - 8)*d + (m + 8d) vs d*q + m: equal up to one fp32 rounding
    assert (ours - ref).abs().max() <= 1e-6 * ref.abs().max()


def test_q4_0_codes_stand_for_the_dequantised_matrix():
    from gguf import GGMLQuantizationType, quants
    w = np.random.default_rng(0).standard_normal((8, 96)).astype(np.float32)
    raw = quants.quantize(w, GGMLQuantizationType.Q4_0)
    parts = int4_weights.from_gguf_blocks(raw, "Q4_0")
    ref = torch.from_numpy(quants.dequantize(raw, GGMLQuantizationType.Q4_0))
    assert torch.equal(int4_weights.dequantize(*parts), ref)


@needs_kernel
@pytest.mark.parametrize("rows", [1, 5])
def test_int4_matmul_is_as_close_to_fp32_as_the_dense_bf16_matmul(reader, rows):
    t = _tensor(reader, "blk.7.ffn_gate.weight")
    parts = int4_weights.from_gguf_blocks(np.asarray(t.data), t.tensor_type.name)
    w = int4_weights.dequantize(*parts)
    x = torch.randn(rows, w.shape[1], generator=torch.Generator().manual_seed(rows)).bfloat16()
    ref = x.float() @ w.t()
    err_int4 = (int4_weights.Int4Linear(*parts, dtype=torch.bfloat16)(x).float() - ref).abs().max()
    err_dense = (F.linear(x, w.bfloat16()).float() - ref).abs().max()
    assert err_int4 <= 2 * err_dense, (err_int4, err_dense)


@pytest.fixture(scope="module")
def bf16_engines():
    """int4 on and off, otherwise identical."""
    return {on: LLMEngine("smollm2-135m", device="cpu", dtype="bf16", threads=1, kv_cache_gib=0.05, int4=on)
            for on in (True, False)}


@needs_kernel
def test_engine_uses_int4_only_where_it_applies(llm32, bf16_engines):
    assert llm32.engine.describe()["int4_weights"] is False  # fp32: dense weights, exact paths
    on, off = bf16_engines[True], bf16_engines[False]
    assert on.describe()["int4_weights"] is True and on.int4_bytes > 0
    assert set(on.model.layers[0].int4) == {"qkv_w", "o_w", "gate_up_w", "down_w"}
    assert off.describe()["int4_weights"] is False and not off.model.layers[0].int4


def test_int4_asked_for_where_it_cannot_run_says_why():
    with pytest.raises(EngineError, match="int4 weights were asked for.*bf16"):
        LLMEngine("smollm2-135m", device="cpu", dtype="fp32", threads=1, kv_cache_gib=0.05, int4=True)


@needs_kernel
def test_int4_logits_are_as_close_to_hf_fp32_as_dense_bf16(bf16_engines, chat_ids, hf_model):
    # 12-token prompts: every matmul of the forward takes the int4 kernel, and the last row's logits the one-row
    # head (8-bit codes with the compiled kernels, else an fp16 copy).
    errs = {True: [], False: []}
    for ids in (chat_ids[0][-12:], chat_ids[5][-12:], chat_ids[9][-12:]):
        with torch.inference_mode():
            ref = hf_model(torch.tensor([ids])).logits[0, -1]
            for on, eng in bf16_engines.items():
                slots = torch.arange(16, 28)  # past the null block; nothing else runs on these engines
                attn = AttentionMetadata(slot_mapping=slots, prefills=[PrefillChunk(0, 12, slots, None)])
                hidden = eng.model(torch.tensor(ids), torch.arange(12), attn)
                ours = eng.model.compute_logits(hidden[-1:])[0].float()
                errs[on].append(((ours - ref).norm() / ref.norm()).item())
    assert max(errs[True]) < 0.05, errs
    assert max(errs[True]) < 2 * max(errs[False]), errs


def test_decode_never_reads_memory_no_request_wrote(llm32, chat_ids):
    """Decode gathers whole blocks, so it reads slots past each sequence's end; blocks are zeroed when handed
    out, so uninitialised memory (here: NaN everywhere but the null block) never reaches attention."""
    params = SamplingParams(max_tokens=20, temperature=0.0)
    prompts = [chat_ids[0], chat_ids[3], chat_ids[9]]
    ref = [o.token_ids for o in llm32.generate(prompts, params)]
    llm = LLM(model="smollm2-135m", device="cpu", dtype="fp32", threads=1, kv_cache_gib=0.05)
    bs = llm.engine.config.block_size
    for k, _ in llm.engine.kv.caches:
        k[:, bs:].fill_(float("nan"))
    assert [o.token_ids for o in llm.generate(prompts, params)] == ref
