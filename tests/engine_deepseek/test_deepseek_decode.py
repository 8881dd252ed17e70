"""Step-by-step decode through the paged latent cache, chunked prefill and prefix hits, against HF logits."""
from __future__ import annotations

import pytest
import torch

from tests.engine_deepseek.conftest import rel_err
from engine.base import SamplingParams
from engine.native.spec_runner import SpecDecodeRunner


def _prompts(lengths, seed=1, vocab=97):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(2, vocab, (n,), generator=g).tolist() for n in lengths]


def _check_against_hf(hf, outs, tol=1e-4):
    """Each emitted token's logits row equals HF's full-sequence forward at that position."""
    for o in outs:
        full = torch.tensor(o.prompt_token_ids + o.token_ids)[None]
        with torch.no_grad():
            ref = hf(full).logits[0]
        p = len(o.prompt_token_ids)
        ours = torch.stack(o.logits)
        assert ours.shape[0] == len(o.token_ids)
        assert rel_err(ours, ref[p - 1:p - 1 + ours.shape[0]]) < tol


@pytest.mark.parametrize("chunk", [None, 5], ids=["whole-prefill", "chunked-prefill-5"])
def test_decode_logits_match_hf(tiny_model, tiny_hf, chunk):
    runner = SpecDecodeRunner(tiny_model, block_size=4, max_prefill_chunk=chunk, record_logits=True)
    outs = runner.generate(_prompts([3, 11, 70]), SamplingParams(max_tokens=12))  # past yarn's original 64
    assert all(len(o.token_ids) == 12 for o in outs)
    _check_against_hf(tiny_hf, outs)


def test_prefix_cache_hit_matches_hf(tiny_model, tiny_hf):
    runner = SpecDecodeRunner(tiny_model, block_size=4, record_logits=True)
    base = _prompts([22])[0]
    runner.generate([base], SamplingParams(max_tokens=4))
    outs = runner.generate([base[:20] + [5, 6, 7]], SamplingParams(max_tokens=8))
    assert outs[0].num_cached_tokens == 20  # five full 4-token blocks reused
    _check_against_hf(tiny_hf, outs)


@pytest.mark.parametrize("nextn", [0, 3])
def test_tokens_do_not_depend_on_batch(tiny_model, nextn):
    prompts = _prompts([9, 3, 30, 17, 5, 41, 12, 2], seed=4)
    sp = SamplingParams(max_tokens=10)
    alone = SpecDecodeRunner(tiny_model, nextn=nextn).generate([prompts[2]], sp)[0].token_ids
    batch = SpecDecodeRunner(tiny_model, nextn=nextn, max_prefill_chunk=7).generate(prompts, sp)
    assert batch[2].token_ids == alone


@pytest.mark.parametrize("nextn", [0, 3])
def test_prefix_hit_leaving_one_token_then_speculating(tiny_model, nextn):
    """A 21-token prompt whose first 20 tokens are cached computes only its last token before decoding."""
    base = _prompts([24], seed=12)[0]
    runner = SpecDecodeRunner(tiny_model, block_size=4, nextn=nextn)
    runner.generate([base], SamplingParams(max_tokens=2))
    out = runner.generate([base[:20] + [9]], SamplingParams(max_tokens=10))[0]
    assert out.num_cached_tokens == 20
    fresh = SpecDecodeRunner(tiny_model, block_size=4).generate([base[:20] + [9]], SamplingParams(max_tokens=10))[0]
    assert out.token_ids == fresh.token_ids
