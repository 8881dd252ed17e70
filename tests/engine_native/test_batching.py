"""Batch invariance (fp32 greedy), prefix caching, chunked prefill and preemption give the same tokens."""
from __future__ import annotations

import pytest

from engine.base import SamplingParams
from engine.native import LLM

GREEDY = SamplingParams(max_tokens=24, temperature=0.0)
SHORT = SamplingParams(max_tokens=12, temperature=0.0)  # variants compare a prefix, to keep the suite fast
PROBES = (0, 7, 19, 31)  # requests also run alone: short, single, paired, longest-ish


@pytest.fixture(scope="module")
def alone(llm32, mixed_ids):
    return {i: llm32.generate([mixed_ids[i]], GREEDY)[0].token_ids for i in PROBES}


def _engine(**kw) -> LLM:
    return LLM(model="smollm2-135m", device="cpu", dtype="fp32", threads=1, **kw)


def test_alone_equals_in_batch_of_32_mixed_lengths(llm32, mixed_ids, alone):
    assert len({len(p) for p in mixed_ids}) > 10
    outs = llm32.generate(mixed_ids, GREEDY)
    assert all(o.finish_reason in ("stop", "length") for o in outs)
    for i in PROBES:
        assert outs[i].token_ids == alone[i], f"request {i} changed inside the batch"


@pytest.mark.parametrize("kw", [
    {"enable_prefix_caching": False},
    {"enable_prefix_caching": True, "max_prefill_chunk": 7},  # prompts computed 7 tokens at a time
], ids=["prefix-cache-off", "tiny-chunked-prefill"])
def test_same_tokens_across_cache_and_chunking_modes(mixed_ids, alone, kw):
    llm = _engine(**kw)
    outs = llm.generate(mixed_ids, SHORT)
    for i in PROBES:
        assert outs[i].token_ids == alone[i][:12]
    again = llm.generate([mixed_ids[19]], GREEDY)[0]  # its prompt blocks were computed above
    assert again.token_ids == alone[19]
    assert (again.num_cached_tokens > 0) == kw["enable_prefix_caching"]
    assert (llm.engine.stats()["prefix_cache_hit_rate"] > 0) == kw["enable_prefix_caching"]


def test_one_token_prefill_chunks_give_same_tokens(mixed_ids, alone):
    llm = _engine(max_prefill_chunk=1, enable_prefix_caching=False)
    assert llm.generate([mixed_ids[0]], SHORT)[0].token_ids == alone[0][:12]


def test_prefix_cache_hit_gives_same_tokens(llm32, mixed_ids, alone):
    before = llm32.engine.stats()["prefix_cache_hits"]
    out = llm32.generate([mixed_ids[19]], GREEDY)[0]  # its prompt blocks are cached from earlier runs
    assert llm32.engine.stats()["prefix_cache_hits"] > before
    assert out.num_cached_tokens >= 16
    assert out.token_ids == alone[19]


def test_preemption_under_tiny_kv_budget_completes_every_request(mixed_ids, alone):
    per_block = 30 * 2 * 3 * 64 * 4 * 16  # layers x (K,V) x kv heads x head dim x fp32 x block size
    llm = _engine(kv_cache_gib=12 * per_block / (1 << 30), enable_prefix_caching=False)
    assert llm.engine.stats()["num_blocks"] == 11  # one of the 12 is the reserved null block
    prompts = [mixed_ids[i] for i in PROBES] * 2
    outs = llm.generate(prompts, SHORT)
    assert llm.engine.stats()["preemptions"] > 0
    for k, i in enumerate(PROBES * 2):
        assert outs[k].finish_reason in ("stop", "length")
        assert outs[k].token_ids == alone[i][:12]
    assert llm.engine.stats()["blocks_free"] == 11


def test_request_larger_than_whole_cache_fails_alone(mixed_ids):
    per_block = 30 * 2 * 3 * 64 * 4 * 16
    llm = _engine(kv_cache_gib=3 * per_block / (1 << 30))  # 2 usable blocks = 32 tokens
    outs = llm.generate([mixed_ids[0], [1, 2, 3]], SamplingParams(max_tokens=8))
    assert outs[0].finish_reason == "error" and "KV cache" in outs[0].error
    assert outs[1].finish_reason in ("stop", "length") and outs[1].token_ids
