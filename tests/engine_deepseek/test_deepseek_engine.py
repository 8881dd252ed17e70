"""DeepSeek-V3 through the built-in engine: LLMEngine (scheduler, paged latent cache, prefix cache) and
SpecLLMEngine (MTP drafts verified in the engine's steps)."""
from __future__ import annotations

import pytest
import torch

from tests.engine_deepseek.conftest import build_engine as _engine
from tests.engine_deepseek.conftest import prompts_of as _prompts
from tests.engine_deepseek.conftest import run_requests, write_tokenizer
from engine.base import EngineError, SamplingParams
from engine.native.llm_engine import LLMEngine
from engine.native.spec_engine import SpecLLMEngine


def _run(engine, prompts, params) -> list[tuple]:
    """(token ids, logprobs, cached tokens) per prompt; no request may fail."""
    outs = run_requests(engine, prompts, params)
    for o in outs:
        assert o.finish_reason != "error", o.error
    return [(o.token_ids, o.logprobs, o.num_cached_tokens) for o in outs]


def test_engine_logprobs_match_hf_with_chunked_prefill_and_prefix_hits(tiny_folder, tiny_hf):
    eng = _engine(LLMEngine, tiny_folder, max_num_batched_tokens=6)  # prompts arrive in chunks of <= 6
    base = _prompts([21], seed=9)[0]
    sp = SamplingParams(max_tokens=8, logprobs=True)
    first = _run(eng, [base], sp)[0]
    second = _run(eng, [base[:16] + [3, 4]], sp)[0]
    assert second[2] == 16  # four 4-token blocks served from the prefix cache
    for prompt, (toks, logprobs, _) in ((base, first), (base[:16] + [3, 4], second)):
        with torch.no_grad():
            ref = torch.log_softmax(tiny_hf(torch.tensor([prompt + toks])).logits[0], -1)
        p = len(prompt)
        want = ref[torch.arange(p - 1, p - 1 + len(toks)), torch.tensor(toks)]
        assert toks == ref[p - 1:p - 1 + len(toks)].argmax(-1).tolist()
        torch.testing.assert_close(torch.tensor(logprobs), want, rtol=1e-4, atol=1e-5)


def test_spec_engine_survives_preemption(predictable_folder):
    prompts = _prompts([30, 28, 25, 31], seed=8)
    sp = SamplingParams(max_tokens=24)
    plain = _run(_engine(LLMEngine, predictable_folder), prompts, sp)
    # 34 blocks of 4 tokens (4 layers incl. MTP x 24 fp32 values per token): all four prompts fit (30 blocks),
    # but not all four grown to ~54 tokens (56 blocks), so running requests get preempted and recomputed.
    per_block = 4 * 24 * 4 * 4
    eng = _engine(SpecLLMEngine, predictable_folder, nextn=3, kv_cache_gib=34.5 * per_block / (1 << 30))
    assert 31 <= eng.stats()["num_blocks"] <= 34
    spec = _run(eng, prompts, sp)
    assert [t for t, _, _ in spec] == [t for t, _, _ in plain]
    assert eng.stats()["preemptions"] > 0


def test_spec_engine_synthetic_acceptance_steps(predictable_folder):
    eng = _engine(SpecLLMEngine, predictable_folder, nextn=3, synthetic_acceptance=0.75, spec_seed=1)
    for p in _prompts([8] * 4, seed=2):
        eng.add_request(p, SamplingParams(max_tokens=200))
    decode_tokens, outputs = 0, 0
    while eng.has_unfinished():
        out = eng.step()
        decode_tokens += out.stats.num_decode_tokens
        outputs += sum(len(o.new_token_ids) for o in out.outputs)
        # A step's decode tokens: accepted drafts + one per decoding request (a request at its last token
        # verifies without drafts).
        assert out.stats.num_decode_tokens >= eng.last_step_spec.num_drafts + eng.last_step_spec.num_accepted_tokens
    assert outputs == 4 * 200 and decode_tokens == 4 * 199  # the first token of each comes from its prefill
    st = eng.spec_stats
    assert st.num_drafts > 150
    assert st.mean_acceptance_length == pytest.approx(1 + 0.75 + 0.75 ** 2 + 0.75 ** 3, abs=0.2)


def test_spec_engine_refuses_checkpoint_without_mtp(tmp_path, engine_cache_dir):
    from tests.engine_deepseek.conftest import make_checkpoint
    folder = make_checkpoint(tmp_path / "nomtp", mtp=False)
    write_tokenizer(folder, 97)
    with pytest.raises(EngineError, match="no MTP draft modules"):
        _engine(SpecLLMEngine, folder, nextn=2)


def test_harness_generate_cli_runs_deepseek(tiny_folder, tmp_path, engine_cache_dir):
    import json
    import os
    import subprocess
    import sys
    out = tmp_path / "run"
    env = {**os.environ, "HARNESS_CACHE_DIR": str(engine_cache_dir)}
    r = subprocess.run([sys.executable, "-m", "harness", "generate", "--task", "aime", "--engine", "native",
                        "--model", str(tiny_folder), "--out", str(out), "--limit", "2", "--samples", "1",
                        "--max-tokens", "6", "--dtype", "fp32", "--threads", "1", "--no-progress"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    assert len(recs) == 2 and all(x["finish_reason"] == "length" and x["usage"]["completion_tokens"] == 6
                                  for x in recs)
    assert recs[0]["engine"]["architecture"] == "DeepseekV3ForCausalLM"


def test_spec_engine_prefix_hits(predictable_folder):
    base = _prompts([24], seed=12)[0]
    follow = [base[:20] + [9], base[:16] + [4, 5, 6]]  # 20 cached (one token left) and 16 cached
    sp = SamplingParams(max_tokens=12)
    plain = _run(_engine(LLMEngine, predictable_folder, enable_prefix_caching=False), follow, sp)
    eng = _engine(SpecLLMEngine, predictable_folder, nextn=3)
    _run(eng, [base], sp)
    spec = [_run(eng, [p], sp)[0] for p in follow]
    assert [c for _, _, c in spec] == [20, 16]
    assert [t for t, _, _ in spec] == [t for t, _, _ in plain]


def test_fp8_checkpoint_through_engine(tmp_path, engine_cache_dir):
    """FP8 weights are dequantised in convert_weights, before the weight cache casts to the engine dtype."""
    import json
    from safetensors.torch import load_file, save_file
    from tests.engine_deepseek.conftest import make_checkpoint
    from engine.native.models.deepseek_v3_loader import dequantize_fp8_block
    from tests.engine_deepseek.test_deepseek_loader import _quantize_fp8
    folder = make_checkpoint(tmp_path / "fp8", hidden_size=160)
    ref_folder = make_checkpoint(tmp_path / "dequantised", hidden_size=160)  # the weights the engine should use
    state = load_file(str(folder / "model.safetensors"))
    deq = dict(state)
    for k in [k for k, v in state.items() if v.dim() == 2 and "self_attn" in k]:
        state[k], state[k + "_scale_inv"] = _quantize_fp8(state[k])
        deq[k] = dequantize_fp8_block(state[k], state[k + "_scale_inv"], (128, 128))
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    save_file(deq, str(ref_folder / "model.safetensors"), metadata={"format": "pt"})
    cfg = json.loads((folder / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}
    (folder / "config.json").write_text(json.dumps(cfg))
    write_tokenizer(folder, 97)
    write_tokenizer(ref_folder, 97)
    prompts = _prompts([7, 13], seed=3)
    sp = SamplingParams(max_tokens=10)
    ref = [t for t, _, _ in _run(_engine(LLMEngine, ref_folder), prompts, sp)]
    for cls, kw in ((LLMEngine, {}), (SpecLLMEngine, {"nextn": 2})):
        got = _run(_engine(cls, folder, **kw), prompts, sp)
        assert [t for t, _, _ in got] == ref


def test_spec_engine_logprobs_and_stop_strings_match_plain(predictable_folder):
    prompts = _prompts([6, 15], seed=4)
    plain_eng = _engine(LLMEngine, predictable_folder)
    first = _run(plain_eng, prompts, SamplingParams(max_tokens=20))
    # Stop on the text of each output's 9th token: rounds that emit several tokens must cut at the same place.
    stops = tuple(f" t{toks[8]} " for toks, _, _ in first)
    sp = SamplingParams(max_tokens=20, logprobs=True, stop=stops)

    def run_text(eng):
        ids = [eng.add_request(p, sp) for p in prompts]
        done = {}
        while eng.has_unfinished():
            for o in eng.step().outputs:
                if o.finished:
                    done[o.request_id] = o
        return [done[i] for i in ids]

    a = run_text(_engine(LLMEngine, predictable_folder))
    b = run_text(_engine(SpecLLMEngine, predictable_folder, nextn=3))
    for x, y in zip(a, b):
        assert x.finish_reason == y.finish_reason == "stop"
        assert x.text == y.text and x.token_ids == y.token_ids
        torch.testing.assert_close(torch.tensor(y.logprobs), torch.tensor(x.logprobs), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("nextn", [0, 3])
def test_engine_tokens_do_not_depend_on_batch(tiny_folder, nextn):
    prompts = _prompts([9, 3, 30, 17, 5, 41, 12, 2], seed=4)
    sp = SamplingParams(max_tokens=10)
    alone = _run(_engine(SpecLLMEngine, tiny_folder, nextn=nextn), [prompts[2]], sp)[0][0]
    batch = _run(_engine(SpecLLMEngine, tiny_folder, nextn=nextn, max_num_batched_tokens=24), prompts, sp)
    assert batch[2][0] == alone


def test_bf16_engine_keeps_router_fp32(tiny_folder):
    from safetensors.torch import load_file
    want = load_file(str(tiny_folder / "model.safetensors"))["model.layers.1.mlp.gate.e_score_correction_bias"]
    for _ in range(2):  # converted, then from the weight cache
        eng = _engine(LLMEngine, tiny_folder, dtype="bf16")
        gate = eng.model.layers[1].mlp.gate
        assert eng.model.embed_tokens.dtype == torch.bfloat16 and gate.weight.dtype == torch.float32
        assert torch.equal(gate.e_score_correction_bias, want.float())
        assert _run(eng, [[5, 6, 7]], SamplingParams(max_tokens=3))[0][0]


def test_spec_engine_refuses_logits_processors(predictable_folder):
    eng = _engine(SpecLLMEngine, predictable_folder, nextn=2)
    with pytest.raises(EngineError, match="logits processors"):
        eng.add_request([5, 6, 7], SamplingParams(max_tokens=2), logits_processor=lambda ids, row: None)
    plain = _engine(SpecLLMEngine, predictable_folder, nextn=0)  # no drafts: processors apply as in LLMEngine
    plain.add_request([5, 6, 7], SamplingParams(max_tokens=2), logits_processor=lambda ids, row: None)
