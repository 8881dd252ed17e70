"""Qwen2, Qwen3, Qwen3-MoE and Mistral (sliding window) against HF transformers on the same random weights, fp32:
logits within 1e-5 and 64 greedy tokens identical through LLM.generate, from the HF folder and from GGUF."""
from __future__ import annotations

import json
import shutil

import pytest
import torch

from engine.base import SamplingParams
from engine.native import LLM
from tests.engine_models.conftest import hf_greedy, load_hf, make_family, to_gguf

# Three prompts batched together; the third repeats the second's first 12 tokens, so with 4-token blocks it
# starts from the prefix cache. All three outgrow Mistral's 8-token window.
PROMPTS = [[5, 17, 3, 99, 42], [7, 7, 21, 30, 2, 11, 4, 8, 19, 60, 33, 12, 90, 14], [7, 7, 21, 30, 2, 11, 4, 8, 19,
                                                                                      60, 33, 12, 100, 101, 102]]
N = 64


def _engine_run(model: str, dtype: str = "fp32") -> tuple[list[list[int]], torch.Tensor]:
    """Greedy tokens of PROMPTS run as one batch, and the logits rows the sampler saw for the first prompt."""
    llm = LLM(model=model, dtype=dtype, threads=1, block_size=4, kv_cache_gib=0.01)
    rows: list[torch.Tensor] = []
    params = [SamplingParams(max_tokens=N, temperature=0.0) for _ in PROMPTS]
    ids = [llm.engine.add_request(p, sp, logits_processor=(lambda out, row: rows.append(row.clone())) if i == 0
                                  else None) for i, (p, sp) in enumerate(zip(PROMPTS, params))]
    done = {}
    while llm.engine.has_unfinished():
        for o in llm.engine.step().outputs:
            if o.finished:
                done[o.request_id] = o
    return [done[i].token_ids for i in ids], torch.stack(rows)


@pytest.fixture(scope="module")
def reference(family_ckpt):
    family, folder = family_ckpt
    hf = load_hf(folder)
    return [hf_greedy(hf, p, N) for p in PROMPTS]


def _check(tokens, logits, reference):
    for i, (got, (want, _)) in enumerate(zip(tokens, reference)):
        first = next((j for j, (a, b) in enumerate(zip(got, want)) if a != b), None)
        assert got == want, f"prompt {i}: first difference at token {first}"
    diff = (logits - reference[0][1]).abs().max().item()
    assert diff < 1e-5 * max(1.0, reference[0][1].abs().max().item()), diff


def test_hf_folder_gives_hf_logits_and_64_greedy_tokens(family_ckpt, reference):
    _, folder = family_ckpt
    tokens, logits = _engine_run(str(folder))
    assert logits.shape == (N, 128)
    _check(tokens, logits, reference)


def test_gguf_of_the_same_weights_gives_the_same(family_ckpt, reference):
    family, folder = family_ckpt
    tokens, logits = _engine_run(str(to_gguf(folder, family)))
    _check(tokens, logits, reference)


def test_bf16_and_q8_0_stay_close_to_fp32(family_ckpt, reference):
    family, folder = family_ckpt
    want = reference[0][1][0]
    for model in (str(folder), str(to_gguf(folder, family, "Q8_0"))):
        for dtype in ("bf16", "fp32"):
            if dtype == "fp32" and model == str(folder):
                continue
            _, logits = _engine_run(model, dtype)
            rel = ((logits[0] - want).norm() / want.norm()).item()
            assert rel < 0.05, (model, dtype, rel)


def test_without_its_window_mistral_would_differ(tmp_path):
    # The window matters on these sequences: the same weights with full attention give other tokens.
    folder = make_family(tmp_path / "mistral", "mistral")
    hf = load_hf(folder)
    want = hf_greedy(hf, PROMPTS[1], N)[0]
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "sliding_window": None}))
    full = LLM(model=str(folder), dtype="fp32", threads=1, block_size=4, kv_cache_gib=0.01)
    assert full.generate([PROMPTS[1]], SamplingParams(max_tokens=N, temperature=0.0))[0].token_ids != want


@pytest.mark.parametrize("family", ["qwen3", "qwen3moe"])
def test_q4_0_gguf_runs_on_its_4_bit_codes_as_on_their_dequantised_values(family, tmp_path):
    gguf = str(to_gguf(make_family(tmp_path / family, family), family, "Q4_0"))
    rows = {}
    for int4 in (True, False):
        llm = LLM(model=gguf, dtype="bf16", threads=1, block_size=4, kv_cache_gib=0.01, int4=int4)
        assert (llm.engine.int4_bytes > 0) == int4
        got = []
        llm.engine.add_request(PROMPTS[0], SamplingParams(max_tokens=1, temperature=0.0),
                               logits_processor=lambda out, row: got.append(row.clone()))
        while llm.engine.has_unfinished():
            llm.engine.step()
        rows[int4] = got[0]
    rel = ((rows[True] - rows[False]).norm() / rows[False].norm()).item()
    assert rel < 0.02, rel


def test_new_weights_in_the_same_folder_are_not_served_from_the_cache(tmp_path):
    """The converted-form cache is keyed on every file of an HF folder, not only config.json: weights written
    again with the same config (a fine-tune saved over its base) give the new model's tokens."""
    folder = make_family(tmp_path / "model", "qwen3", seed=0)
    first, _ = _engine_run(str(folder))
    other = make_family(tmp_path / "other", "qwen3", seed=1)
    shutil.copyfile(other / "model.safetensors", folder / "model.safetensors")  # config.json untouched
    second, _ = _engine_run(str(folder))
    want = [hf_greedy(load_hf(folder), p, N)[0] for p in PROMPTS]
    assert second == want and second != first
