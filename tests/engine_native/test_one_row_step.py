"""The compiled one-row decode stack (one_row_step.py, kernels/decode_step.cpp) writes what the Python layer loop
writes, bit for bit, and steps aside wherever it does not apply."""
from __future__ import annotations

import pytest

from engine.base import SamplingParams
from engine.native import LLM, int4_weights, kernels, one_row_step

pytestmark = pytest.mark.skipif(not (int4_weights.available() and kernels.load()),
                                reason="needs torch's CPU int4 kernel and the compiled kernels")


@pytest.fixture(scope="module")
def llm16():
    # No prefix cache: a repeated prompt would compute its tail in another step shape, with other rounding.
    return LLM(model="smollm2-135m", device="cpu", dtype="bf16", threads=1, kv_cache_gib=0.05,
               enable_prefix_caching=False, ignore_eos=True)


@pytest.fixture
def calls(monkeypatch):
    """How many steps went through the compiled stack."""
    seen = []
    real = kernels.decode_layers
    monkeypatch.setattr(kernels, "decode_layers", lambda *a: seen.append(1) or real(*a))
    yield seen
    one_row_step.set_enabled(True)


def _run(llm, prompts, on: bool, n: int = 24):
    one_row_step.set_enabled(on)
    params = SamplingParams(max_tokens=n, temperature=0.0, logprobs=True)
    return [(o.token_ids, o.logprobs) for o in llm.generate(prompts, params)]


def test_one_row_steps_match_the_python_loop_bitwise(llm16, chat_ids, calls):
    # A chat prompt, and one long enough (300+ tokens) that attention splits the context into several work items.
    long = (chat_ids[2] * 20)[:330]
    for prompt in (chat_ids[4], long):
        loop = _run(llm16, [prompt], False)
        assert not calls
        fused = _run(llm16, [prompt], True)
        assert len(calls) == 23  # every decode step after the prompt's own
        assert fused == loop  # same tokens and the same float logprobs: the same arithmetic
        calls.clear()


def test_batches_and_other_dtypes_take_the_python_loop(llm16, llm32, chat_ids, calls):
    _run(llm16, [chat_ids[0], chat_ids[1]], True, n=6)
    assert not calls  # two decode rows per step
    _run(llm32, [chat_ids[0]], True, n=4)
    assert not calls and llm32.engine.model.one_row_stack is not None  # fp32 keeps torch's ops (decided once)
