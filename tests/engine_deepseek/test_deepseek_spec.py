"""MTP speculative decoding: exact greedy tokens, exact sampling distribution, accounting, synthetic mode."""
from __future__ import annotations

import pytest
import torch

from tests.engine_deepseek.conftest import make_checkpoint
from engine.base import SamplingParams
from engine.native.models.deepseek_v3 import DeepseekV3Model
from engine.native.spec_decode import SyntheticAcceptance, processed_probs
from engine.native.spec_runner import SpecDecodeRunner
from tests.engine_deepseek.test_deepseek_decode import _prompts


@pytest.mark.parametrize("which", ["tiny_model", "predictable_model"])
@pytest.mark.parametrize("nextn", [1, 3])
def test_greedy_spec_equals_plain_greedy(request, which, nextn):
    model = request.getfixturevalue(which)
    prompts = _prompts([5, 17, 33, 9, 2])
    sp = SamplingParams(max_tokens=25)
    plain = SpecDecodeRunner(model).generate(prompts, sp)
    runner = SpecDecodeRunner(model, nextn=nextn, block_size=4)
    spec = runner.generate(prompts, sp)
    assert [o.token_ids for o in spec] == [o.token_ids for o in plain]
    st = runner.stats
    assert st.num_drafts > 0 and st.num_draft_tokens <= nextn * st.num_drafts
    if which == "predictable_model":  # drafts mostly right: the accept and bonus paths run
        assert 0.3 < st.acceptance_rate < 1.0 and st.mean_acceptance_length > 1.5
    else:  # random MTP weights: mostly rejected, the correction path runs
        assert st.acceptance_rate < 0.5


def test_accounting_per_request_and_engine(predictable_model):
    prompts = _prompts([4, 12, 20])
    runner = SpecDecodeRunner(predictable_model, nextn=3)
    outs = runner.generate(prompts, SamplingParams(max_tokens=30))
    total = sum(o.spec.num_accepted_tokens for o in outs)
    assert total == runner.stats.num_accepted_tokens
    assert sum(o.spec.num_drafts for o in outs) == runner.stats.num_drafts
    for o in outs:
        s = o.spec
        assert s.mean_acceptance_length == pytest.approx(1 + s.num_accepted_tokens / s.num_drafts)
        assert s.acceptance_rate == pytest.approx(s.num_accepted_tokens / s.num_draft_tokens)
        assert sum(s.accepted_per_position) == s.num_accepted_tokens
        assert all(a >= b for a, b in zip(s.accepted_per_position, s.accepted_per_position[1:]))
        # Each round emits accepted + 1 tokens; the last round may be cut by max_tokens.
        assert len(o.token_ids) <= 1 + s.num_drafts + s.num_accepted_tokens
    d = runner.stats.to_dict()
    assert {"num_drafts", "num_draft_tokens", "num_accepted_tokens", "accepted_per_position",
            "acceptance_rate", "mean_acceptance_length", "acceptance_per_position"} <= set(d)


def test_stop_token_inside_accepted_drafts(predictable_model):
    prompts = _prompts([6], seed=2)
    plain = SpecDecodeRunner(predictable_model).generate(prompts, SamplingParams(max_tokens=30))[0].token_ids
    stop = plain[7]
    sp = SamplingParams(max_tokens=30, stop_token_ids=(stop,))
    a = SpecDecodeRunner(predictable_model).generate(prompts, sp)[0]
    b = SpecDecodeRunner(predictable_model, nextn=3).generate(prompts, sp)[0]
    assert a.token_ids == b.token_ids == plain[:plain.index(stop) + 1]
    assert a.finish_reason == b.finish_reason == "stop"


def test_synthetic_acceptance_hits_expected_length(predictable_model):
    runner = SpecDecodeRunner(predictable_model, nextn=3, synthetic_acceptance=0.75, seed=11)
    runner.generate(_prompts([8] * 8, seed=3), SamplingParams(max_tokens=120))
    st = runner.stats
    assert st.num_drafts > 300
    expected = SyntheticAcceptance.expected_length(0.75, 3)
    assert expected == pytest.approx(1 + 0.75 + 0.75 ** 2 + 0.75 ** 3)
    assert st.mean_acceptance_length == pytest.approx(expected, abs=0.15)
    for i, rate in enumerate(st.acceptance_per_position):
        assert rate == pytest.approx(0.75 ** (i + 1), abs=0.07)


@pytest.fixture(scope="module")
def small_vocab_model(tmp_path_factory):
    ckpt = make_checkpoint(tmp_path_factory.mktemp("dsv3v"), seed=5, vocab_size=8, eos_token_id=None)
    return DeepseekV3Model.from_folder(ckpt)


def _exact_dist(model, prompt, sp) -> torch.Tensor:
    """P(t2, t3 | prompt), summed over t1, by enumerating continuations through the plain runner's logits."""
    V = model.args.vocab_size
    runner = SpecDecodeRunner(model, record_logits=True, enable_prefix_caching=False)

    def next_probs(prefixes):
        outs = runner.generate([prompt + p for p in prefixes], SamplingParams(max_tokens=1))
        return torch.stack([processed_probs(o.logits[0], sp) for o in outs]).double()

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
def test_sampled_spec_matches_target_distribution(small_vocab_model, sp):
    """Tokens 2 and 3 come out of draft/verify rounds (accepted drafts, corrections, bonus tokens)."""
    model, n = small_vocab_model, 4000
    prompt = [3, 1, 4, 1, 5]
    exact = _exact_dist(model, prompt, sp)
    params = [SamplingParams(**{**sp.to_dict(), "seed": s, "stop": ()}) for s in range(n)]
    runner = SpecDecodeRunner(model, nextn=2, max_num_seqs=n, enable_prefix_caching=False)
    outs = runner.generate([prompt] * n, params)
    V = model.args.vocab_size
    counts = torch.zeros(V * V, dtype=torch.float64)
    for o in outs:
        counts[o.token_ids[1] * V + o.token_ids[2]] += 1
    st = runner.stats
    assert st.num_drafts >= n and 0.05 < st.acceptance_rate < 0.95 and st.accepted_per_position[1] > 0
    assert _chi2_pvalue(counts, exact) > 1e-3
    assert 0.5 * float((counts / n - exact).abs().sum()) < 0.05
    # Power: the same samples clearly reject a target that is only mildly off (temperature x1.3).
    off = SamplingParams(**{**sp.to_dict(), "temperature": sp.temperature * 1.3, "stop": ()})
    assert _chi2_pvalue(counts, _exact_dist(model, prompt, off)) < 1e-6


def test_two_mtp_modules_are_used_in_turn(tmp_path):
    """A checkpoint with 2 MTP modules (model.layers.3.* and .4.*): both load, drafts stay exact."""
    model = DeepseekV3Model.from_folder(make_checkpoint(tmp_path, seed=3, predictable=0.14, eos_token_id=None,
                                                        num_nextn_predict_layers=2))
    assert model.num_mtp == 2
    calls = []
    inner = model.mtp_forward
    model.mtp_forward = lambda k, *a: calls.append(k) or inner(k, *a)
    prompts = _prompts([5, 17, 9])
    sp = SamplingParams(max_tokens=20)
    plain = SpecDecodeRunner(model).generate(prompts, sp)
    spec = SpecDecodeRunner(model, nextn=3).generate(prompts, sp)
    assert [o.token_ids for o in spec] == [o.token_ids for o in plain]
    assert set(calls) == {0, 1}  # step 1 module 0, step 2 module 1, step 3 module 0 again
