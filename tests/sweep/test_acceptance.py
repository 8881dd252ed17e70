"""Seeded synthetic acceptance reaches its target acceptance length 1 + p + ... + p^n."""
from __future__ import annotations

import pytest
import torch

from sweep.acceptance import SyntheticAcceptance, expected_acceptance_length


def test_expected_length_formula():
    assert expected_acceptance_length(0.75, 3) == pytest.approx(1 + 0.75 + 0.5625 + 0.421875)  # 2.734
    assert expected_acceptance_length(0.0, 3) == 1.0
    assert expected_acceptance_length(1.0, 3) == 4.0
    assert expected_acceptance_length(0.9, 0) == 1.0


@pytest.mark.parametrize("p,nextn", [(0.75, 3), (0.5, 1), (0.9, 5), (0.3, 2)])
def test_realised_length_reaches_target(p, nextn):
    acc = SyntheticAcceptance(p=p, nextn=nextn, seed=11)
    for _ in range(200):  # 200 steps x 256 requests = 51,200 draft rounds
        counts = acc.sample(256)
        assert counts.min() >= 0 and counts.max() <= nextn
    # standard error of AL is below 0.01 here; 0.02 leaves room without hiding a wrong definition
    assert acc.acceptance_length == pytest.approx(expected_acceptance_length(p, nextn), abs=0.02)
    assert acc.drafts == 51_200 and acc.drafted_tokens == 51_200 * nextn
    # per-position conditional acceptance: position 1 is accepted with probability p
    assert acc.acceptance_rate < p or nextn == 1


def test_edges_and_seeding():
    assert SyntheticAcceptance(1.0, 3).sample(5).tolist() == [3] * 5
    assert SyntheticAcceptance(0.0, 3).sample(5).tolist() == [0] * 5
    assert SyntheticAcceptance(0.5, 0).sample(4).tolist() == [0] * 4
    a, b = SyntheticAcceptance(0.6, 3, seed=5), SyntheticAcceptance(0.6, 3, seed=5)
    assert torch.equal(a.sample(64), b.sample(64))
    assert not torch.equal(SyntheticAcceptance(0.6, 3, seed=6).sample(64), SyntheticAcceptance(0.6, 3, seed=5).sample(64))
    with pytest.raises(ValueError):
        SyntheticAcceptance(1.5, 3)
