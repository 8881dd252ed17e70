"""Seeded synthetic acceptance (the engine's SyntheticAcceptance) reaches its target length 1 + p + ... + p^n."""
from __future__ import annotations

import pytest

from engine.native.spec_decode import SpecStats, SyntheticAcceptance
from sweep.acceptance import expected_acceptance_length


def test_expected_length_formula():
    assert expected_acceptance_length(0.75, 3) == pytest.approx(1 + 0.75 + 0.5625 + 0.421875)  # 2.734
    assert expected_acceptance_length(0.0, 3) == 1.0
    assert expected_acceptance_length(1.0, 3) == 4.0
    assert expected_acceptance_length(0.9, 0) == 1.0


@pytest.mark.parametrize("p,nextn", [(0.75, 3), (0.5, 1), (0.9, 5), (0.3, 2)])
def test_realised_length_reaches_target(p, nextn):
    acc, stats = SyntheticAcceptance(p, seed=11), SpecStats()
    for _ in range(20_000):
        n = acc.num_accepted(nextn)
        assert 0 <= n <= nextn
        stats.record(nextn, n)
    # the standard error of AL is below 0.01 here; 0.03 leaves room without hiding a wrong definition
    assert stats.mean_acceptance_length == pytest.approx(expected_acceptance_length(p, nextn), abs=0.03)
    # conditional acceptance: position i+1 is accepted in a fraction p^(i+1) of rounds
    for i, rate in enumerate(stats.acceptance_per_position):
        assert rate == pytest.approx(p ** (i + 1), abs=0.02)


def test_edges_and_seeding():
    assert [SyntheticAcceptance(1.0).num_accepted(3) for _ in range(5)] == [3] * 5
    assert [SyntheticAcceptance(0.0).num_accepted(3) for _ in range(5)] == [0] * 5
    assert SyntheticAcceptance(0.5).num_accepted(0) == 0
    a, b = SyntheticAcceptance(0.6, seed=5), SyntheticAcceptance(0.6, seed=5)
    assert [a.num_accepted(3) for _ in range(64)] == [b.num_accepted(3) for _ in range(64)]
    c, d = SyntheticAcceptance(0.6, seed=6), SyntheticAcceptance(0.6, seed=5)
    assert [c.num_accepted(3) for _ in range(64)] != [d.num_accepted(3) for _ in range(64)]
    with pytest.raises(ValueError):
        SyntheticAcceptance(1.5)
