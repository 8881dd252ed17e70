"""Long generations beyond the KV budget finish by recompute preemption, with the same greedy fp32 tokens
(the real SmolLM2-135M); the KV bytes per token are reported at start-up."""
from __future__ import annotations

import pytest

from engine.base import SamplingParams
from engine.native import LLM
from engine.native.block_manager import BlockManager
from engine.native.config import EngineConfig
from engine.native.scheduler import Scheduler
from engine.native.sequence import Sequence

SEQUENCES, OUTPUT_TOKENS, BLOCK = 8, 80, 16
BYTES_PER_TOKEN = 30 * 2 * 3 * 64 * 4  # SmolLM2-135M fp32: layers x (K, V) x KV heads x head dim x 4 bytes
QUESTIONS = ["Explain how a bicycle stays upright.", "Write a short story about a lighthouse keeper.",
             "Describe the water cycle step by step.", "What makes a good scientific experiment?",
             "Tell me about the history of the printing press.", "How do vaccines train the immune system?",
             "Plan a three-day trip to the mountains.", "Why do leaves change colour in autumn?"]


def _engine(kv_blocks: int) -> LLM:
    # ignore_eos: every sequence writes OUTPUT_TOKENS tokens, like a reasoning model's long thinking.
    return LLM(model="smollm2-135m", device="cpu", dtype="fp32", threads=1, ignore_eos=True, block_size=BLOCK,
               kv_cache_gib=(kv_blocks + 1) * BLOCK * BYTES_PER_TOKEN / (1 << 30))


@pytest.mark.slow
def test_eight_long_sequences_finish_in_a_small_kv_budget_with_identical_tokens(capfd):
    params = SamplingParams(max_tokens=OUTPUT_TOKENS, temperature=0.0)
    roomy = _engine(kv_blocks=SEQUENCES * 16)  # every sequence fits at once: no preemption
    assert f"KV cache: {BYTES_PER_TOKEN} bytes per token" in capfd.readouterr().err
    assert roomy.engine.describe()["kv_bytes_per_token"] == BYTES_PER_TOKEN
    tk = roomy.tokenizer
    prompts = [tk.encode(tk.render_chat([{"role": "user", "content": q}])) for q in QUESTIONS]
    reference = roomy.generate(prompts, params)
    assert roomy.engine.stats()["preemptions"] == 0

    tight = _engine(kv_blocks=16)  # 256 tokens: under a third of what the eight sequences end up needing
    need = sum(len(p) + OUTPUT_TOKENS for p in prompts)
    assert tight.engine.stats()["num_blocks"] * BLOCK * 3 < need
    outputs = tight.generate(prompts, params)
    stats = tight.engine.stats()
    assert stats["preemptions"] >= 2  # sequences were sent back and recomputed
    assert stats["recomputed_tokens"] > 0
    for i, (ours, ref) in enumerate(zip(outputs, reference)):
        assert ours.finish_reason == "length" and len(ours.token_ids) == OUTPUT_TOKENS, f"sequence {i}: {ours.error}"
        assert ours.token_ids == ref.token_ids, f"sequence {i} changed under preemption"
    assert stats["blocks_free"] == stats["num_blocks"]  # every block came back


def test_recompute_preemption_does_not_thrash_on_long_outputs():
    """Scheduler alone: 8 sequences of 100 + 4,000 tokens in room for about 4. Readmitting a preempted sequence
    as soon as blocks free up would recompute it again and again (over 500k tokens here); it waits instead."""
    prompt, out, blocks = 100, 4000, 1000
    config = EngineConfig(kv_cache_bytes=0, block_size=BLOCK, max_num_seqs=256, max_num_batched_tokens=2048,
                          max_model_len=8192)
    sched = Scheduler(config, BlockManager(blocks + 1, BLOCK))
    seqs = [Sequence(f"r{i}", [i * 1000 + j for j in range(prompt)], SamplingParams(max_tokens=out)) for i in range(8)]
    for seq in seqs:
        sched.add(seq)
    computed = 0
    while sched.has_unfinished():
        batch, failed = sched.schedule()
        assert not failed
        for seq, n in zip(batch.seqs, batch.num_new_tokens):
            seq.advance(n)
            sched.bm.register_computed(seq)
            computed += n
            if seq.num_computed_tokens == seq.num_tokens:  # a forward reached its newest token: one more token
                seq.append_token(7, None)
                if seq.num_output_tokens >= out:
                    sched.finish(seq)
    ideal = 8 * (prompt + out)
    assert all(seq.num_output_tokens == out for seq in seqs)
    assert 0 < sched.total_preemptions <= 8 and computed < 1.5 * ideal
    assert sched.total_recomputed_tokens > 0
