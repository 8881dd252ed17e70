"""Step-by-step decode through the engine's paged latent cache, chunked prefill and prefix hits, against HF
logits (each emitted token's full logits row, read with a logits processor)."""
from __future__ import annotations

import pytest
import torch

from tests.engine_deepseek.conftest import build_engine, prompts_of, rel_err, run_requests
from engine.base import SamplingParams
from engine.native.llm_engine import LLMEngine


def _run_recording(eng, prompts, sp):
    """Final outputs and, per request, the logits row behind each emitted token."""
    rows = [[] for _ in prompts]
    procs = [lambda ids, row, out=out: out.append(row.clone()) for out in rows]
    return run_requests(eng, prompts, sp, procs), rows


def _check_against_hf(hf, outs, rows, tol=1e-4):
    """Each emitted token's logits row equals HF's full-sequence forward at that position."""
    for o, r in zip(outs, rows):
        full = torch.tensor(o.prompt_token_ids + o.token_ids)[None]
        with torch.no_grad():
            ref = hf(full).logits[0]
        p = len(o.prompt_token_ids)
        ours = torch.stack(r)
        assert ours.shape[0] == len(o.token_ids)
        assert rel_err(ours, ref[p - 1:p - 1 + ours.shape[0]]) < tol


@pytest.mark.parametrize("chunk", [None, 5], ids=["whole-prefill", "chunked-prefill-5"])
def test_decode_logits_match_hf(tiny_folder, tiny_hf, chunk):
    eng = build_engine(LLMEngine, tiny_folder, max_prefill_chunk=chunk)
    outs, rows = _run_recording(eng, prompts_of([3, 11, 70]), SamplingParams(max_tokens=12))  # past yarn's 64
    assert all(len(o.token_ids) == 12 for o in outs)
    _check_against_hf(tiny_hf, outs, rows)


@pytest.mark.parametrize("cached_prefix,tail", [(20, [9]), (16, [5, 6, 7])])  # 20: one token left to compute
def test_prefix_cache_hit_matches_hf(tiny_folder, tiny_hf, cached_prefix, tail):
    eng = build_engine(LLMEngine, tiny_folder)
    base = prompts_of([22])[0]
    run_requests(eng, [base], SamplingParams(max_tokens=4))
    prompt = base[:cached_prefix] + tail
    outs, rows = _run_recording(eng, [prompt], SamplingParams(max_tokens=8))
    assert outs[0].num_cached_tokens == cached_prefix  # full 4-token blocks reused
    _check_against_hf(tiny_hf, outs, rows)
