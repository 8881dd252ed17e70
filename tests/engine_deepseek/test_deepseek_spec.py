"""MTP speculative decoding through SpecLLMEngine: exact greedy tokens, exact sampling distribution,
accounting, synthetic mode, bounded per-request state."""
from __future__ import annotations

import pytest
import torch

from tests.engine_deepseek.conftest import build_engine, make_checkpoint, prompts_of, run_requests, write_tokenizer
from engine.base import SamplingParams
from engine.native.llm_engine import LLMEngine
from engine.native.sampler import filtered_probs
from engine.native.spec_decode import SyntheticAcceptance
from engine.native.spec_engine import SpecLLMEngine


def _tokens(outs) -> list[list[int]]:
    assert all(o.finish_reason != "error" for o in outs), [o.error for o in outs]
    return [o.token_ids for o in outs]


@pytest.mark.parametrize("which", ["tiny_folder", "predictable_folder"])
@pytest.mark.parametrize("nextn", [1, 3])
def test_greedy_spec_equals_plain_greedy(request, which, nextn):
    folder = request.getfixturevalue(which)
    prompts = prompts_of([5, 17, 33, 9, 2, 26], seed=6)
    sp = SamplingParams(max_tokens=20)
    plain = run_requests(build_engine(LLMEngine, folder), prompts, sp)
    eng = build_engine(SpecLLMEngine, folder, nextn=nextn, max_num_batched_tokens=16)
    assert _tokens(run_requests(eng, prompts, sp)) == _tokens(plain)
    st = eng.spec_stats
    assert st.num_drafts > 0 and st.num_draft_tokens <= nextn * st.num_drafts
    if which == "predictable_folder":  # drafts mostly right: the accept and bonus paths run
        assert 0.3 < st.acceptance_rate < 1.0 and st.mean_acceptance_length > 1.5
    else:  # random MTP weights: mostly rejected, the correction path runs
        assert st.acceptance_rate < 0.5
    assert eng.describe()["nextn"] == nextn and eng.stats()["spec"]["num_drafts"] == st.num_drafts


def test_accounting_per_request_and_engine_and_state_is_released(predictable_folder):
    eng = build_engine(SpecLLMEngine, predictable_folder, nextn=3)
    outs = run_requests(eng, prompts_of([4, 12, 20]), SamplingParams(max_tokens=30))
    stats = [o.spec_stats for o in outs]
    assert sum(s.num_accepted_tokens for s in stats) == eng.spec_stats.num_accepted_tokens
    assert sum(s.num_drafts for s in stats) == eng.spec_stats.num_drafts
    for o, s in zip(outs, stats):
        assert s.mean_acceptance_length == pytest.approx(1 + s.num_accepted_tokens / s.num_drafts)
        assert s.acceptance_rate == pytest.approx(s.num_accepted_tokens / s.num_draft_tokens)
        assert sum(s.accepted_per_position) == s.num_accepted_tokens
        assert all(a >= b for a, b in zip(s.accepted_per_position, s.accepted_per_position[1:]))
        # Each round emits accepted + 1 tokens; the last round may be cut by max_tokens.
        assert len(o.token_ids) <= 1 + s.num_drafts + s.num_accepted_tokens
    d = eng.spec_stats.to_dict()
    assert {"num_drafts", "num_draft_tokens", "num_accepted_tokens", "accepted_per_position",
            "acceptance_rate", "mean_acceptance_length", "acceptance_per_position"} <= set(d)
    # Per-request state leaves with the request: none is kept for finished or aborted requests.
    assert not eng.request_spec_stats and not eng._mtp
    rid = eng.add_request(prompts_of([9])[0], SamplingParams(max_tokens=50))
    for _ in range(4):
        eng.step()
    assert rid in eng.request_spec_stats
    eng.abort(rid)
    eng.step()
    assert not eng.request_spec_stats and not eng._mtp


def test_stop_token_inside_accepted_drafts(predictable_folder):
    prompts = prompts_of([6], seed=2)
    plain = _tokens(run_requests(build_engine(LLMEngine, predictable_folder), prompts, SamplingParams(max_tokens=30)))[0]
    stop = plain[7]
    sp = SamplingParams(max_tokens=30, stop_token_ids=(stop,))
    a = run_requests(build_engine(LLMEngine, predictable_folder), prompts, sp)[0]
    b = run_requests(build_engine(SpecLLMEngine, predictable_folder, nextn=3), prompts, sp)[0]
    assert a.token_ids == b.token_ids == plain[:plain.index(stop) + 1]
    assert a.finish_reason == b.finish_reason == "stop"


def test_synthetic_acceptance_hits_expected_length(predictable_folder):
    eng = build_engine(SpecLLMEngine, predictable_folder, nextn=3, synthetic_acceptance=0.75, spec_seed=11)
    run_requests(eng, prompts_of([8] * 8, seed=3), SamplingParams(max_tokens=120))
    st = eng.spec_stats
    assert st.num_drafts > 250
    expected = SyntheticAcceptance.expected_length(0.75, 3)
    assert expected == pytest.approx(1 + 0.75 + 0.75 ** 2 + 0.75 ** 3)
    assert st.mean_acceptance_length == pytest.approx(expected, abs=0.15)
    for i, rate in enumerate(st.acceptance_per_position):
        assert rate == pytest.approx(0.75 ** (i + 1), abs=0.08)


@pytest.fixture(scope="module")
def small_vocab_ckpt(tmp_path_factory):
    folder = make_checkpoint(tmp_path_factory.mktemp("dsv3v"), seed=5, vocab_size=8, eos_token_id=None)
    write_tokenizer(folder, 8)
    return folder


def _exact_dist(folder, prompt, sp) -> torch.Tensor:
    """P(t2, t3 | prompt), summed over t1, by enumerating continuations with the plain engine's logits rows."""
    eng = build_engine(LLMEngine, folder, enable_prefix_caching=False)

    def next_probs(prefixes):
        rows = [[] for _ in prefixes]
        procs = [lambda ids, row, out=out: out.append(row.clone()) for out in rows]
        run_requests(eng, [prompt + p for p in prefixes], SamplingParams(max_tokens=1), procs)
        return filtered_probs(torch.stack([r[0] for r in rows]), [sp] * len(rows)).double()

    V = 8
    p1 = next_probs([[]])[0]
    p2 = next_probs([[a] for a in range(V)])  # [t1, t2]
    p3 = next_probs([[a, b] for a in range(V) for b in range(V)]).view(V, V, V)  # [t1, t2, t3]
    return (p1[:, None, None] * p2[:, :, None] * p3).sum(0).flatten()


def _chi2_pvalue(counts: torch.Tensor, probs: torch.Tensor) -> float:
    keep = probs > 1e-12
    expected = probs[keep] / probs[keep].sum() * counts.sum()
    stat = float(((counts[keep] - expected) ** 2 / expected).sum())
    df = int(keep.sum()) - 1
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                         torch.tensor(stat / 2, dtype=torch.float64)))


@pytest.mark.parametrize("sp", [SamplingParams(max_tokens=4, temperature=1.0),
                                SamplingParams(max_tokens=4, temperature=0.8, top_k=6, top_p=0.95)],
                         ids=["t1", "t0.8-topk6-topp0.95"])
def test_sampled_spec_matches_target_distribution(small_vocab_ckpt, engine_cache_dir, sp):
    """Tokens 2 and 3 come out of draft/verify rounds (accepted drafts, corrections, bonus tokens)."""
    n, prompt, V = 4000, [3, 1, 4, 1, 5], 8
    exact = _exact_dist(small_vocab_ckpt, prompt, sp)
    params = [SamplingParams(**{**sp.to_dict(), "seed": s, "stop": ()}) for s in range(n)]
    eng = build_engine(SpecLLMEngine, small_vocab_ckpt, nextn=2, max_num_seqs=n, max_num_batched_tokens=16384,
                       enable_prefix_caching=False)
    counts = torch.zeros(V * V, dtype=torch.float64)
    for toks in _tokens(run_requests(eng, [prompt] * n, params)):
        counts[toks[1] * V + toks[2]] += 1
    st = eng.spec_stats
    assert st.num_drafts >= n and 0.05 < st.acceptance_rate < 0.95 and st.accepted_per_position[1] > 0
    assert _chi2_pvalue(counts, exact) > 1e-3
    # Total variation: sampling noise alone gives ~0.04 at n = 4000 over these 64 cells.
    assert 0.5 * float((counts / n - exact).abs().sum()) < 0.07
    # Power: the same samples clearly reject a target that is only mildly off (temperature x1.3).
    off = SamplingParams(**{**sp.to_dict(), "temperature": sp.temperature * 1.3, "stop": ()})
    assert _chi2_pvalue(counts, _exact_dist(small_vocab_ckpt, prompt, off)) < 1e-6


def test_two_mtp_modules_are_used_in_turn(tmp_path, engine_cache_dir):
    """A checkpoint with 2 MTP modules (model.layers.3.* and .4.*): both load, drafts stay exact."""
    folder = make_checkpoint(tmp_path, seed=3, predictable=0.14, eos_token_id=None, num_nextn_predict_layers=2)
    write_tokenizer(folder, 97)
    eng = build_engine(SpecLLMEngine, folder, nextn=3)
    assert eng.model.num_mtp == 2
    calls = []
    inner = eng.model.mtp_forward
    eng.model.mtp_forward = lambda k, *a: calls.append(k) or inner(k, *a)
    prompts = prompts_of([5, 17, 9])
    sp = SamplingParams(max_tokens=20)
    plain = run_requests(build_engine(LLMEngine, folder), prompts, sp)
    assert _tokens(run_requests(eng, prompts, sp)) == _tokens(plain)
    assert set(calls) == {0, 1}  # step 1 module 0, step 2 module 1, step 3 module 0 again


def test_tiny_temperature_is_greedy_on_the_speculative_path(predictable_folder):
    """1e-45 once gave NaN probabilities, and torch.multinomial then failed the whole step."""
    prompts = prompts_of([5, 9], seed=7)
    plain = _tokens(run_requests(build_engine(LLMEngine, predictable_folder), prompts, SamplingParams(max_tokens=12)))
    eng = build_engine(SpecLLMEngine, predictable_folder, nextn=2)
    params = [SamplingParams(max_tokens=12, temperature=1e-45, seed=1), SamplingParams(max_tokens=12)]
    assert _tokens(run_requests(eng, prompts, params)) == plain
    assert eng.spec_stats.num_drafts > 0


def test_a_failing_verify_fails_only_its_request(predictable_folder, monkeypatch):
    import engine.native.spec_engine as spec_engine

    def broken(*args, **kwargs):
        raise RuntimeError("bad row")
    monkeypatch.setattr(spec_engine, "accept_rejection", broken)  # only sampled requests reach it
    prompts = prompts_of([5, 9], seed=7)
    plain = run_requests(build_engine(LLMEngine, predictable_folder), prompts[1:], SamplingParams(max_tokens=12))
    eng = build_engine(SpecLLMEngine, predictable_folder, nextn=2)
    sampled, greedy = run_requests(eng, prompts, [SamplingParams(max_tokens=12, temperature=0.8, seed=1),
                                                  SamplingParams(max_tokens=12)])
    assert sampled.finish_reason == "error" and "speculative verify failed: RuntimeError: bad row" in sampled.error
    assert greedy.finish_reason != "error" and greedy.token_ids == plain[0].token_ids
    assert eng.stats()["blocks_used"] == 0 and not eng.request_spec_stats
