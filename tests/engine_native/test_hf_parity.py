"""fp32 parity with HF transformers LlamaForCausalLM loaded from the same GGUF."""
from __future__ import annotations

import torch

from engine.base import SamplingParams
from engine.native.attention import AttentionMetadata, PrefillChunk


def test_greedy_tokens_match_hf_for_16_prompts_x_64_tokens(llm32, chat_ids, hf_model):
    # HF runs as one unpadded batch, so every prompt is cut to the same length from the left
    # (the tail, ending in the assistant header, stays a valid chat prompt).
    n = min(len(p) for p in chat_ids[:16])
    prompts = [p[-n:] for p in chat_ids[:16]]
    with torch.inference_mode():
        ref = hf_model.generate(torch.tensor(prompts), attention_mask=torch.ones(16, n, dtype=torch.long),
                                max_new_tokens=64, do_sample=False, eos_token_id=2, pad_token_id=2)
    ref = ref[:, n:].tolist()
    ours = llm32.generate(prompts, SamplingParams(max_tokens=64, temperature=0.0))
    for i, (o, r) in enumerate(zip(ours, ref)):
        k = len(o.token_ids)
        assert o.token_ids == r[:k], f"prompt {i} diverges"
        assert all(t == 2 for t in r[k:]), f"prompt {i}: HF went on after our stop"
    assert sum(o.finish_reason == "length" for o in ours) >= 8  # most prompts run the full 64 tokens


def test_prefill_logits_match_hf(llm32, chat_ids, hf_model):
    eng = llm32.engine
    ids = chat_ids[0] + chat_ids[1]
    T = len(ids)
    with torch.inference_mode():
        ref = hf_model(torch.tensor([ids])).logits[0]
        slots = torch.arange(16, 16 + T)  # past the null block; nothing else is running
        attn = AttentionMetadata(slot_mapping=slots, prefills=[PrefillChunk(0, T, slots, None)])
        hidden = eng.model(torch.tensor(ids), torch.arange(T), attn)
        ours = eng.model.compute_logits(hidden)
    rel = ((ours - ref).norm() / ref.norm()).item()
    assert rel < 1e-4, rel
    assert torch.equal(ours.argmax(-1), ref.argmax(-1))
