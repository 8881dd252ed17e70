"""The 8-bit KV cache (kv_cache_dtype "int8", engine/native/kv_quant.py): the row format, the compiled write and
decode attention against the plain PyTorch reference, and the engine with it."""
from __future__ import annotations

import pytest
import torch

from engine.base import EngineError, SamplingParams
from engine.native import kernels
from engine.native.attention import AttentionMetadata, KVCacheSpec, PrefillChunk, paged_attention
from engine.native.kv_quant import dequantize_rows, head_dim_of, quantize_rows, resolve_kv_dtype, row_bytes
from engine.native.llm_engine import LLMEngine

needs_kernels = pytest.mark.skipif(not kernels.load(), reason="no C++ compiler to build the kernels")


def test_rows_hold_codes_and_a_scale_per_32_values_within_half_a_step():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 3, 128, generator=g) * torch.tensor([0.01, 1.0, 300.0])[None, :, None]
    x[0, 0, :32] = 0  # an all-zero group: scale 0, codes 0
    rows = quantize_rows(x)
    assert rows.dtype == torch.int8 and rows.shape == (5, 3, row_bytes(128)) == (5, 3, 144)
    assert head_dim_of(144) == 128 and head_dim_of(row_bytes(64)) == 64
    back = dequantize_rows(rows, torch.float32)
    step = x.reshape(5, 3, 4, 32).abs().amax(-1, keepdim=True) / 127
    assert ((back - x).reshape(5, 3, 4, 32).abs() <= step / 2 * (1 + 1e-6)).all()
    assert (back[0, 0, :32] == 0).all()
    assert (dequantize_rows(torch.zeros(2, 72, dtype=torch.int8), torch.bfloat16) == 0).all()  # zeroed blocks


def test_only_k_and_v_head_caches_take_8_bit_rows():
    spec = KVCacheSpec(num_layers=4, k_shape=(6, 64), v_shape=None, slot_axis=1)
    q = spec.int8_rows()
    assert q.k_shape == (6, 72) and q.bytes_per_token(torch.int8) == 4 * 6 * 72
    with pytest.raises(EngineError, match="cache layout"):
        KVCacheSpec(num_layers=2, k_shape=(576,), v_shape=None).int8_rows()  # MLA's latent rows
    with pytest.raises(EngineError, match="multiple of 32"):
        KVCacheSpec(num_layers=2, k_shape=(4, 80), v_shape=None, slot_axis=1).int8_rows()
    with pytest.raises(EngineError, match="kv_cache_dtype must be one of"):
        resolve_kv_dtype("fp8", torch.bfloat16)
    assert resolve_kv_dtype("auto", torch.bfloat16) == torch.bfloat16 and resolve_kv_dtype("int8", torch.float32) == torch.int8


@needs_kernels
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_compiled_write_is_bitwise_the_reference_rows(dtype):
    g = torch.Generator().manual_seed(1)
    hq, hkv, d, T = 9, 3, 64, 7
    qkv = (torch.randn(T, (hq + 2 * hkv) * d, generator=g) * 3).to(dtype)
    cos, sin = torch.randn(T, 1, d, generator=g).to(dtype), torch.randn(T, 1, d, generator=g).to(dtype)
    slots = torch.tensor([0, 5, 17, 18, 100, 250, 255])
    q8 = torch.zeros(2 * hkv, 256, row_bytes(d), dtype=torch.int8)
    plain = torch.zeros(2 * hkv, 256, d, dtype=dtype)
    a, b = qkv.clone(), qkv.clone()
    kernels.rope_and_cache(a, cos, sin, q8, slots, hq, hkv)
    kernels.rope_and_cache(b, cos, sin, plain, slots, hq, hkv)
    assert torch.equal(a, b)  # the rotation is the same; only the cache's form differs
    assert torch.equal(q8[:, slots], quantize_rows(plain[:, slots]))
    assert (q8[:, 1:5] == 0).all()  # rows not written stay as they were


def _reference(q: torch.Tensor, values: torch.Tensor, tables: list[list[int]], lens: list[int], block: int):
    """float32 attention of each decode row over its context, from dequantised K/V values [2*Hkv, slots, D]."""
    hkv, d = values.shape[0] // 2, values.shape[-1]
    out = []
    for b, n in enumerate(lens):
        pos = torch.arange(n)
        slots = torch.tensor(tables[b])[pos // block] * block + pos % block
        k, v = values[:hkv, slots], values[hkv:, slots]
        qq = q[b].float().view(hkv, -1, d)
        p = (torch.einsum("hgd,htd->hgt", qq, k) * d ** -0.5).softmax(-1)
        out.append(torch.einsum("hgt,htd->hgd", p, v).reshape(-1))
    return torch.stack(out)


@needs_kernels
@pytest.mark.parametrize("d,hq,hkv", [(64, 9, 3), (128, 16, 8), (96, 4, 2)])  # 96: the plain loop, not the tiles
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("in_place", [True, False])
def test_decode_attention_over_8_bit_rows_matches_the_dequantised_reference(d, hq, hkv, dtype, tol, in_place):
    from tests.engine_native.test_kernels import BLOCK, decode_metadata, random_case
    lens = [1, 17, 300, 513]
    g = torch.Generator().manual_seed(d + hq)
    q, cache, tables = random_case(g, lens, num_blocks=sum((n + BLOCK - 1) // BLOCK for n in lens) + 3,
                                   hq=hq, hkv=hkv, d=d, dtype=dtype)
    q8 = quantize_rows(cache.float().clamp(-50, 50))
    kv = torch.zeros(len(lens), hkv, d, dtype=dtype)
    got = paged_attention(q, kv, kv, q8, decode_metadata(lens, tables, in_place=in_place))
    assert got.shape == (len(lens), hq * d) and got.dtype == dtype
    ref = _reference(q, dequantize_rows(q8, torch.float32), tables, lens, BLOCK)
    torch.testing.assert_close(got.float(), ref, atol=tol, rtol=tol)


@pytest.fixture(scope="module")
def engines():
    return {kd: LLMEngine("smollm2-135m", device="cpu", dtype="bf16", threads=1, kv_cache_gib=0.05, kv_cache_dtype=kd)
            for kd in ("auto", "int8")}


def test_int8_cache_holds_nearly_twice_the_tokens(engines):
    bf16, q8 = engines["auto"], engines["int8"]
    assert bf16.describe()["kv_cache_dtype"] == "bf16" and q8.describe()["kv_cache_dtype"] == "int8"
    assert q8.kv_bytes_per_token * 128 == bf16.kv_bytes_per_token * 72  # 64 values: 72 bytes a row, not 128
    assert q8.kv.num_blocks >= 1.7 * bf16.kv.num_blocks


def test_logits_read_from_8_bit_rows_stay_close_to_fp32(engines, chat_ids):
    """A second prefill chunk attends to the whole context through the cache, so its logits read every K/V row
    back from the 8-bit form; they must stay about as close to fp32 as bf16's do."""
    ids = (chat_ids[3] + chat_ids[8] + chat_ids[11])[:96]
    n = len(ids)
    slots = torch.arange(16, 16 + n)

    def logits(eng):
        with torch.inference_mode():
            first = AttentionMetadata(slot_mapping=slots[:48], prefills=[PrefillChunk(0, 48, slots[:48], None)])
            eng.model(torch.tensor(ids[:48]), torch.arange(48), first)
            mask = torch.arange(n)[None, :] <= torch.arange(48, n)[:, None]
            second = AttentionMetadata(slot_mapping=slots[48:], prefills=[PrefillChunk(0, n - 48, slots, mask)])
            return eng.model.compute_logits(eng.model(torch.tensor(ids[48:]), torch.arange(48, n), second)).float()

    ref = logits(LLMEngine("smollm2-135m", device="cpu", dtype="fp32", threads=1, kv_cache_gib=0.05))
    err, agree = {}, {}
    for kd, eng in engines.items():
        got = logits(eng)
        err[kd] = ((got - ref).norm(dim=-1) / ref.norm(dim=-1)).mean().item()
        agree[kd] = (got.argmax(-1) == ref.argmax(-1)).float().mean().item()
    # measured: mean relative distance to fp32 0.027 (int8 rows) against 0.023 (bf16), the same argmax on every row
    assert err["int8"] < 1.5 * err["auto"], err
    assert agree["int8"] >= 0.9, agree


def test_generation_with_an_8_bit_cache_runs_through_every_path(engines):
    """Prefill, batched decode (compiled kernel) and a lone decode row (compiled layer stack) all read the 8-bit
    cache; greedy text stays on the same track as bf16 for a while (short answers, one thread)."""
    outs = {}
    for kd, eng in engines.items():
        ids = [eng.tokenizer.encode(eng.tokenizer.render_chat([{"role": "user", "content": p}]))
               for p in ("What is the capital of France?", "List three prime numbers.")]
        for i, p in enumerate(ids):
            # different lengths, so the longer request's last steps are one-row steps
            eng.add_request(p, SamplingParams(max_tokens=24 - 12 * i, temperature=0.0), request_id=f"{kd}-{i}")
        done = {}
        while eng.has_unfinished():
            for o in eng.step().outputs:
                if o.finished:
                    done[o.request_id] = o.token_ids
        outs[kd] = [done[f"{kd}-{i}"] for i in range(2)]
    for a, b in zip(outs["auto"], outs["int8"]):
        assert len(b) > 0
        assert a[:4] == b[:4], (a, b)
    if kernels.load():  # the lone row's steps went through the compiled stack over the 8-bit cache
        from engine.native.one_row_step import OneRowStack
        assert isinstance(engines["int8"].model.one_row_stack, OneRowStack)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_prefill_writes_its_k_and_v_as_8_bit_rows_on_both_paths(compiled, chat_ids):
    """With and without the compiled kernels (HARNESS_NATIVE_KERNELS=0, or no compiler): a prompt's prefill attends
    to its own fresh K/V, so an int8 engine computes what a bf16 engine does and caches exactly quantize_rows of it."""
    if compiled and not kernels.load():
        pytest.skip("no C++ compiler to build the kernels")

    def prefill_cache(kv_cache_dtype: str) -> list[torch.Tensor]:
        kernels.set_enabled(compiled)
        try:
            eng = LLMEngine("smollm2-135m", device="cpu", dtype="bf16", threads=1, kv_cache_gib=0.02,
                            kv_cache_dtype=kv_cache_dtype)
            assert eng.model.layers[0].fused_rope == compiled
            eng.add_request(chat_ids[5], SamplingParams(max_tokens=1, temperature=0.0))
            while eng.has_unfinished():
                eng.step()
            return [kv for kv, _ in eng.kv.caches]
        finally:
            kernels.set_enabled(True)
    rows, plain = prefill_cache("int8"), prefill_cache("auto")
    written = slice(16, 16 + len(chat_ids[5]))  # block 0 is the null block
    assert all(torch.equal(r[:, written], quantize_rows(b[:, written])) for r, b in zip(rows, plain))
    assert rows[0][:, written].abs().sum() > 0


def test_int8_cache_is_refused_under_tensor_parallelism():
    with pytest.raises(EngineError, match="one rank"):
        LLMEngine("smollm2-135m", device="cpu", tp=2, kv_cache_dtype="int8")
