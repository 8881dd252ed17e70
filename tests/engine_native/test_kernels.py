"""Compiled CPU kernels (engine/native/kernels) against the PyTorch code they replace: decode attention read in
place from the paged cache vs the gather path, RoPE + cache write, add + RMSNorm, the 8-bit logits head."""
from __future__ import annotations

import pytest
import torch

from engine.native import kernels
from engine.native.attention import AttentionMetadata, Workspace, paged_attention

pytestmark = pytest.mark.skipif(not kernels.load(), reason="no C++ compiler to build the decode kernel")

BLOCK = 16


def decode_metadata(lens: list[int], tables: list[list[int]], in_place: bool) -> AttentionMetadata:
    """The decode part of what ModelRunner.prepare builds, for rows of the given lengths and block tables."""
    ctx = torch.tensor(lens)
    nb = (max(lens) + BLOCK - 1) // BLOCK
    bt = torch.zeros(len(lens), nb, dtype=torch.long)
    for r, t in enumerate(tables):
        bt[r, :len(t)] = torch.tensor(t)
    p = torch.arange(nb * BLOCK)
    valid = p[None, :] < ctx[:, None]
    slots = (bt[:, p // BLOCK] * BLOCK + p % BLOCK).masked_fill_(~valid, 0)
    return AttentionMetadata(slot_mapping=torch.zeros(len(lens), dtype=torch.long), num_decode=len(lens),
                             decode_slots=slots, decode_mask=valid[:, None, None, :], decode_blocks=bt,
                             decode_max_len=max(lens), decode_lens=ctx, block_size=BLOCK,
                             workspace=Workspace(), in_place=in_place)


def random_case(g: torch.Generator, lens: list[int], num_blocks: int, hq: int, hkv: int, d: int,
                dtype: torch.dtype):
    """A cache whose blocks are dealt to the rows in random order; unused slots hold large values, which a
    correct kernel never reads (the gather path masks them)."""
    cache = torch.randn(2 * hkv, num_blocks * BLOCK, d, generator=g).to(dtype)
    cache[:, :BLOCK] = 0  # the null block, as the KV cache keeps it
    perm = (torch.randperm(num_blocks - 1, generator=g) + 1).tolist()
    tables = []
    for n in lens:
        k = (n + BLOCK - 1) // BLOCK
        tables.append(perm[:k])
        perm = perm[k:]
        last = tables[-1][-1]
        cache[:, last * BLOCK + (n - 1) % BLOCK + 1:(last + 1) * BLOCK] = 1e4  # past the row's end
    q = torch.randn(len(lens), hq, d, generator=g).to(dtype)
    return q, cache, tables


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-5), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("lens", [[1], [7], [16], [33], [300, 5, 17, 1024, 257], [2048], [513, 511, 40, 1]])
def test_in_place_matches_gather(dtype, tol, lens):
    g = torch.Generator().manual_seed(sum(lens))
    hq, hkv, d = 9, 3, 64
    q, cache, tables = random_case(g, lens, num_blocks=sum((n + BLOCK - 1) // BLOCK for n in lens) + 3,
                                   hq=hq, hkv=hkv, d=d, dtype=dtype)
    kv = torch.zeros(len(lens), hkv, d, dtype=dtype)  # this step's k/v are only read by prefill chunks
    new = paged_attention(q, kv, kv, cache, decode_metadata(lens, tables, in_place=True))
    old = paged_attention(q, kv, kv, cache, decode_metadata(lens, tables, in_place=False))
    assert new.shape == old.shape == (len(lens), hq * d) and new.dtype == dtype
    torch.testing.assert_close(new.float(), old.float(), atol=tol, rtol=tol)


def test_strided_query_rows_and_other_head_layouts():
    """q as the model passes it (a head slice of the fused q/k rows), and MHA / 8-way GQA shapes."""
    g = torch.Generator().manual_seed(3)
    for hq, hkv in [(4, 4), (8, 1)]:
        lens = [100, 37]
        _, cache, tables = random_case(g, lens, 20, hq, hkv, 32, torch.float32)
        qk = torch.randn(len(lens), hq + hkv, 32, generator=g)
        q = qk[:, :hq]
        kv = torch.zeros(len(lens), hkv, 32)
        new = paged_attention(q, kv, kv, cache, decode_metadata(lens, tables, in_place=True))
        old = paged_attention(q, kv, kv, cache, decode_metadata(lens, tables, in_place=False))
        torch.testing.assert_close(new, old, atol=2e-5, rtol=2e-5)


def test_row_result_does_not_depend_on_the_batch():
    """fp32 greedy output must not change with what else runs: a row's result is bitwise the same alone."""
    g = torch.Generator().manual_seed(5)
    lens = [700, 33, 1500]
    q, cache, tables = random_case(g, lens, 200, 9, 3, 64, torch.float32)
    kv = torch.zeros(3, 3, 64)
    together = paged_attention(q, kv, kv, cache, decode_metadata(lens, tables, True))
    for r in range(3):
        alone = paged_attention(q[r:r + 1], kv[:1], kv[:1], cache, decode_metadata([lens[r]], [tables[r]], True))
        assert torch.equal(alone[0], together[r])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("hq,hkv,d", [(9, 3, 64), (8, 1, 128), (4, 4, 64), (16, 2, 128), (6, 6, 32)])
def test_tiled_items_give_the_row_at_a_time_bits(monkeypatch, dtype, hq, hkv, d):
    """The tiled work items (D 64 and 128) add in the same order as the row-at-a-time ones: equal, not close."""
    g = torch.Generator().manual_seed(hq * d)
    lens = [1, 7, 16, 33, 300, 5, 257, 513, 250]
    q, cache, tables = random_case(g, lens, sum((n + BLOCK - 1) // BLOCK for n in lens) + 3, hq, hkv, d, dtype)
    attn = decode_metadata(lens, tables, in_place=True)
    out = {}
    for tiled in (False, True):
        monkeypatch.setattr(kernels, "DECODE_TILED", tiled)
        out[tiled] = kernels.paged_decode_attention(q, cache, attn.decode_blocks, attn.decode_lens, BLOCK, d ** -0.5)
    assert torch.equal(out[True], out[False])


def test_bad_block_table_is_an_error_not_a_stray_read():
    q = torch.randn(1, 9, 64)
    cache = torch.zeros(6, 4 * BLOCK, 64)
    with pytest.raises(RuntimeError, match="block table entry"):
        kernels.paged_decode_attention(q, cache, torch.tensor([[7]]), torch.tensor([5]), BLOCK, 0.125)
    with pytest.raises(RuntimeError, match="context length"):
        kernels.paged_decode_attention(q, cache, torch.tensor([[1]]), torch.tensor([17]), BLOCK, 0.125)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rope_and_cache_is_bitwise_the_torch_expression(dtype):
    """The fused op rounds as the PyTorch ops it replaces, so fp32 greedy output cannot move."""
    g = torch.Generator().manual_seed(11)
    T, hq, hkv, d, slots = 37, 9, 3, 64, 5 * BLOCK
    qkv = (torch.randn(T, (hq + 2 * hkv) * d, generator=g) * 3).to(dtype)
    angles = torch.rand(T, 1, d // 2, generator=g) * 100
    cos, sin = torch.cat((angles, angles), -1).cos().to(dtype), torch.cat((angles, angles), -1).sin().to(dtype)
    slot_mapping = torch.randperm(slots, generator=g)[:T]

    qk = qkv[:, :(hq + hkv) * d].view(T, hq + hkv, d)
    rot = torch.cat((-qk[..., d // 2:], qk[..., :d // 2]), dim=-1)
    want = qk * cos + rot * sin
    want_cache = torch.zeros(2 * hkv, slots, d, dtype=dtype)
    kv = torch.cat((want[:, hq:], qkv[:, (hq + hkv) * d:].view(T, hkv, d)), 1)
    want_cache.index_copy_(1, slot_mapping, kv.transpose(0, 1))

    cache = torch.zeros(2 * hkv, slots, d, dtype=dtype)
    kernels.rope_and_cache(qkv, cos, sin, cache, slot_mapping, hq, hkv)
    assert torch.equal(qkv[:, :(hq + hkv) * d].view(T, hq + hkv, d), want)
    assert torch.equal(cache, want_cache)
    with pytest.raises(RuntimeError, match="slot"):
        kernels.rope_and_cache(qkv, cos, sin, cache, torch.full((T,), slots), hq, hkv)


def test_add_rms_norm_rounds_as_torch_does_in_bf16():
    """Sum bitwise torch's bf16 add; the norm within one bf16 ulp of F.rms_norm (its float sum of squares is
    added in another order), and bitwise on nearly every element."""
    g = torch.Generator().manual_seed(2)
    x = (torch.randn(7, 576, generator=g) * 3).bfloat16()
    r = torch.randn(7, 576, generator=g).bfloat16()
    w = (torch.rand(576, generator=g) + 0.5).bfloat16()
    for residual in (r, None):
        s, h = kernels.add_rms_norm(x, residual, w, 1e-5)
        want_s = x + residual if residual is not None else x
        want_h = torch.nn.functional.rms_norm(want_s, (576,), w, 1e-5)
        assert torch.equal(s, want_s)
        torch.testing.assert_close(h, want_h, atol=0, rtol=2 ** -7)
        assert (h != want_h).sum() <= h.numel() // 100


def test_int8_head_matches_its_dequantised_matrix_and_recovers_q8_0_codes():
    g = torch.Generator().manual_seed(4)
    # A matrix in GGUF Q8_0 form: int8 codes with |max| 127 in each group of 32, times an fp16 scale per group.
    codes = torch.randint(-127, 128, (300, 96), generator=g, dtype=torch.int8)
    codes[:, ::32] = 127
    scale = (torch.rand(300, 3, generator=g) * 0.02 + 1e-3).half().float()
    w = (codes.float().view(300, 3, 32) * scale[..., None]).view(300, 96)
    got_codes, got_scale = kernels.quantize_int8_groups(w)
    assert torch.equal(got_codes, codes)
    torch.testing.assert_close(got_scale, scale, atol=0, rtol=1e-6)
    x = torch.randn(1, 96, generator=g).bfloat16()
    want = (x.double() @ w.double().T).float()
    out = kernels.int8_matvec(x, got_codes, got_scale)
    assert out.dtype == torch.float32 and out.shape == (1, 300)
    torch.testing.assert_close(out, want, atol=1e-4, rtol=1e-4)


def test_silu_mul_rounds_as_torch_does_in_bf16():
    g = torch.Generator().manual_seed(6)
    gu = (torch.randn(5, 2 * 1536, generator=g) * 4).bfloat16()
    gate, up = gu.chunk(2, dim=-1)
    want = torch.nn.functional.silu(gate) * up
    got = kernels.silu_mul(gu)
    torch.testing.assert_close(got, want, atol=0, rtol=2 ** -7)
    assert (got != want).sum() <= want.numel() // 100


def test_switching_off_and_on_reuses_the_loaded_library(monkeypatch):
    """Turning the kernels back on must not load a second library (its ops would register twice and abort),
    even when the source on disk no longer matches the loaded build."""
    monkeypatch.setattr(kernels, "_library_path", lambda: pytest.fail("looked for another library"))
    try:
        assert kernels.set_enabled(False) is False and kernels.load() is False
        assert kernels.set_enabled(True) is True and kernels.load() is True
    finally:
        kernels.set_enabled(True)


def test_block_size_that_does_not_divide_the_split_falls_back_to_the_gather_path():
    g = torch.Generator().manual_seed(8)
    lens = [50, 7]
    q, cache, tables = random_case(g, lens, 8, 9, 3, 64, torch.float32)
    meta = decode_metadata(lens, tables, in_place=True)
    meta.block_size = 24  # 256 % 24 != 0: the kernel cannot take it, the plain path must
    from engine.native.attention import reads_in_place
    assert not reads_in_place(cache, meta)
