"""Sampler and stop handling as a user sees them: seeds, top-k/top-p, stop strings, stop ids, logprobs."""
from __future__ import annotations

import math

import pytest

from engine.base import SamplingParams


def test_seeded_sampling_is_independent_of_the_batch(llm32, mixed_ids):
    sp = SamplingParams(max_tokens=16, temperature=0.9, top_p=0.95, top_k=50, seed=1234)
    alone = llm32.generate([mixed_ids[3]], sp)[0].token_ids
    batch = llm32.generate(mixed_ids[:12], [SamplingParams(max_tokens=16, temperature=1.0, seed=i) for i in range(3)]
                           + [sp] + [SamplingParams(max_tokens=16)] * 8)
    assert batch[3].token_ids == alone
    other = llm32.generate([mixed_ids[3]], SamplingParams(max_tokens=16, temperature=0.9, top_p=0.95, top_k=50, seed=99))
    greedy = llm32.generate([mixed_ids[3]], SamplingParams(max_tokens=16))[0].token_ids
    assert other[0].token_ids != alone or alone != greedy  # sampling really samples


def test_top_k_1_and_tiny_top_p_equal_greedy(llm32, mixed_ids):
    greedy = llm32.generate(mixed_ids[:3], SamplingParams(max_tokens=12))
    k1 = llm32.generate(mixed_ids[:3], SamplingParams(max_tokens=12, temperature=1.5, top_k=1, seed=5))
    p0 = llm32.generate(mixed_ids[:3], SamplingParams(max_tokens=12, temperature=1.5, top_p=1e-6, seed=5))
    for g, a, b in zip(greedy, k1, p0):
        assert g.token_ids == a.token_ids == b.token_ids


def test_max_tokens_gives_length_and_eos_gives_stop(llm32, chat_ids):
    short = llm32.generate([chat_ids[0]], SamplingParams(max_tokens=3))[0]
    assert short.finish_reason == "length" and len(short.token_ids) == 3
    full = llm32.generate([chat_ids[0]], SamplingParams(max_tokens=64))[0]
    assert full.finish_reason == "stop" and full.token_ids[-1] == 2 and "Paris" in full.text
    assert "<|im_end|>" not in full.text


def test_stop_string_spanning_tokens_is_cut_and_never_streamed(llm32, chat_ids):
    eng = llm32.engine
    full = llm32.generate([chat_ids[0]], SamplingParams(max_tokens=64))[0].text  # "The capital of France is Paris."
    assert "of France" in full
    rid = eng.add_request(chat_ids[0], SamplingParams(max_tokens=64, stop=("f Fra",)))
    streamed, final = "", None
    while eng.has_unfinished():
        for o in eng.step().outputs:
            if o.request_id == rid:
                streamed += o.new_text
                final = o if o.finished else final
    assert final.finish_reason == "stop"
    assert final.text == full[:full.index("f Fra")] == streamed  # the held-back "o" never leaked beyond


def test_stop_token_ids_and_logprobs(llm32, chat_ids):
    base = llm32.generate([chat_ids[0]], SamplingParams(max_tokens=10, logprobs=True))[0]
    assert len(base.logprobs) == len(base.token_ids)
    assert all(lp <= 0 and math.isfinite(lp) for lp in base.logprobs)
    stop_id = base.token_ids[3]
    cut = llm32.generate([chat_ids[0]], SamplingParams(max_tokens=10, stop_token_ids=(stop_id,)))[0]
    assert cut.finish_reason == "stop" and cut.token_ids == base.token_ids[:4]


@pytest.mark.parametrize("kwargs", [{"temperature": -1}, {"top_p": 0}, {"top_p": 1.5}, {"top_k": -2},
                                    {"max_tokens": 0}, {"temperature": float("nan")}])
def test_invalid_sampling_values_are_rejected(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        SamplingParams(**kwargs)


def test_over_long_prompt_errors_only_that_request(mixed_ids):
    from engine.native import LLM
    llm = LLM(model="smollm2-135m", device="cpu", dtype="fp32", threads=1, max_model_len=64)
    long = mixed_ids[0] * 3
    outs = llm.generate([mixed_ids[0], long, mixed_ids[1]], SamplingParams(max_tokens=8))
    assert outs[1].finish_reason == "error" and "context length is 64" in outs[1].error
    assert outs[0].finish_reason in ("stop", "length") and outs[0].token_ids
    assert outs[2].finish_reason in ("stop", "length") and outs[2].token_ids


def test_logits_processor_edits_a_requests_rows_before_sampling(llm32, chat_ids):
    eng = llm32.engine
    greedy = SamplingParams(max_tokens=6, temperature=0.0)
    plain = llm32.generate([chat_ids[2]], greedy)[0].token_ids
    banned, seen = plain[0], []

    def ban(output_token_ids, row):
        seen.append(list(output_token_ids))
        row[banned] = float("-inf")

    rid = eng.add_request(chat_ids[2], greedy, logits_processor=ban)
    other = eng.add_request(chat_ids[2], greedy)  # same prompt in the same steps, no processor
    done = {}
    while eng.has_unfinished():
        done.update({o.request_id: o for o in eng.step().outputs if o.finished})
    assert done[other].token_ids == plain
    ours = done[rid].token_ids
    assert banned not in ours and len(ours) == 6
    assert seen == [ours[:i] for i in range(6)]  # called once per sampled token, with the tokens so far
    assert not eng._processors  # dropped when the request finished


def test_stats_counts_requests_blocks_and_prefix_hits(llm32, chat_ids):
    eng = llm32.engine
    prompt = chat_ids[4]
    eng.add_request(prompt, SamplingParams(max_tokens=3))
    st = eng.stats()
    assert st["requests_waiting"] == 1 and st["requests_running"] == 0
    queries, hits = st["prefix_cache_queries"], st["prefix_cache_hits"]
    eng.step()  # the whole prompt in one chunk
    st = eng.stats()
    full_blocks = (len(prompt) - 1) // st["block_size"]
    assert st["requests_running"] == 1
    assert st["blocks_used"] == -(-len(prompt) // st["block_size"])  # the prompt's blocks, no more, no less
    assert st["prefix_cache_queries"] == queries + full_blocks
    while eng.has_unfinished():
        eng.step()
    st = eng.stats()
    assert st["requests_waiting"] == st["requests_running"] == 0
    assert st["blocks_used"] == 0  # nothing leaks once every request has finished
    assert st["blocks_cached"] >= full_blocks  # the prompt's full blocks stay cached for the next request
    eng.add_request(prompt, SamplingParams(max_tokens=1))
    while eng.has_unfinished():
        eng.step()
    assert eng.stats()["prefix_cache_hits"] >= hits + full_blocks  # and the next request hits them


def test_tiny_temperature_is_greedy_and_leaves_other_requests_alone(llm32, chat_ids):
    greedy = llm32.generate(chat_ids[:2], SamplingParams(max_tokens=12))
    tiny = SamplingParams(max_tokens=12, temperature=1e-45, seed=3)
    sampled = SamplingParams(max_tokens=12, temperature=0.9, seed=7)
    alone = llm32.generate([chat_ids[1]], sampled)[0]
    outs = llm32.generate(chat_ids[:2], [tiny, sampled])
    assert outs[0].finish_reason != "error" and outs[0].token_ids == greedy[0].token_ids
    assert outs[1].token_ids == alone.token_ids  # the concurrent seeded request draws as it would alone


def test_non_finite_sampling_value_is_a_value_error_at_add_request(llm32, chat_ids):
    for name, value in (("temperature", float("nan")), ("temperature", float("inf")), ("top_p", float("nan"))):
        sp = SamplingParams(max_tokens=2)
        object.__setattr__(sp, name, value)  # built around SamplingParams' own validation
        with pytest.raises(ValueError, match=name):
            llm32.engine.add_request(chat_ids[0], sp)
    assert not llm32.engine.has_unfinished()
