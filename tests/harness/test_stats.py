"""Paired statistics against hand-computed and brute-force values."""
import itertools
import math
import random

import pytest

from harness.stats import (bootstrap_ci, cohen_kappa, items_needed, mcnemar_exact, paired_difference,
                           plain_language, sign_flip_test)


def brute_force_mcnemar(b: int, c: int) -> float:
    """Enumerate every assignment of the n discordant pairs to A or B with probability 1/2 each."""
    n = b + c
    observed = abs(b - c)
    hits = sum(1 for bits in itertools.product((0, 1), repeat=n) if abs(2 * sum(bits) - n) >= observed)
    return hits / 2**n


@pytest.mark.parametrize("b,c", [(0, 0), (1, 0), (3, 1), (2, 9), (7, 7), (0, 12), (5, 6)])
def test_mcnemar_exact_matches_enumeration(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(brute_force_mcnemar(b, c))


def test_mcnemar_by_hand():
    # 1 vs 5 discordant: P(X<=1) = (1 + 6) / 64; two-sided doubles it
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)


def test_kappa_by_hand():
    # table: both right 20, both wrong 15, A only 5, B only 10 (n = 50)
    a = [True] * 20 + [False] * 15 + [True] * 5 + [False] * 10
    b = [True] * 20 + [False] * 15 + [False] * 5 + [True] * 10
    po = 35 / 50
    pe = (25 / 50) * (30 / 50) + (25 / 50) * (20 / 50)
    assert cohen_kappa(a, b) == pytest.approx((po - pe) / (1 - pe))
    assert cohen_kappa([True, False], [True, False]) == 1.0
    assert cohen_kappa([True, True], [True, True]) is None  # 0/0: both raters constant
    assert cohen_kappa([], []) is None


def test_paired_difference_and_clustered_se_by_hand():
    a = [0.0, 0.5, 1.0, 0.25]
    b = [0.5, 0.5, 1.0, 1.0]
    d = [0.5, 0.0, 0.0, 0.75]  # mean 0.3125
    res = paired_difference(a, b, seed=1, resamples=2000)
    mean = sum(d) / 4
    var = sum((x - mean) ** 2 for x in d) / 3
    assert res.diff == pytest.approx(0.3125) and res.mean_a == pytest.approx(0.4375)
    assert res.stderr == pytest.approx(math.sqrt(var / 4))
    assert res.ci95[0] == pytest.approx(mean - 1.959964 * res.stderr, abs=1e-5)


def test_bootstrap_is_seeded_and_close_to_the_analytic_interval():
    rng = random.Random(3)
    a = [float(rng.random() < 0.4) for _ in range(400)]
    b = [float(rng.random() < 0.5) if x == 0 else float(rng.random() < 0.9) for x in a]
    res = paired_difference(a, b, seed=7, resamples=4000)
    assert res.bootstrap_ci95 == paired_difference(a, b, seed=7, resamples=4000).bootstrap_ci95
    (lo, hi), (blo, bhi) = res.ci95, res.bootstrap_ci95
    width = hi - lo
    assert abs(blo - lo) < 0.1 * width and abs(bhi - hi) < 0.1 * width
    assert blo < res.diff < bhi


def test_bootstrap_of_a_constant_is_that_constant():
    assert bootstrap_ci([0.25] * 10, seed=0, resamples=100) == (0.25, 0.25)


def test_sign_flip_exact_by_hand_and_monte_carlo_agrees():
    # d = [1, 1, 1]: of 8 sign patterns only +++ and --- reach |sum| = 3
    assert sign_flip_test([1.0, 1.0, 1.0, 0.0]) == (pytest.approx(2 / 8), "exact")
    d = [0.5, 0.25, -0.25, 0.75, 0.5, 0.0, 0.25, 1.0, -0.5, 0.25, 0.5, 0.75]
    exact, how = sign_flip_test(d)
    assert how == "exact"
    many = d * 2  # 22 non-zero: drawn, not enumerated
    drawn, how = sign_flip_test(many, seed=0, draws=20_000)
    assert how == "monte carlo" and 0 < drawn < exact


def test_sign_flip_equals_mcnemar_with_one_sample_per_item():
    # with 0/1 outcomes the sign-flip statistic is |b - c|: the same test as exact McNemar
    d = [1.0] * 7 + [-1.0] * 2 + [0.0] * 20
    assert sign_flip_test(d)[0] == pytest.approx(mcnemar_exact(2, 7))


def test_items_needed_power_formula():
    d = [0.1, -0.1] * 50 + [0.1] * 10  # mean ~0.009, sd ~0.1
    mean = sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
    assert items_needed(d) == math.ceil(((1.959964 + 0.841621) * sd / mean) ** 2)
    assert items_needed([0.0, 0.0, 0.0]) is None


def test_plain_language_lines():
    ahead = paired_difference([0.0] * 30 + [1.0] * 10, [1.0] * 30 + [1.0] * 10, seed=0, resamples=500)
    line = plain_language(ahead, mcnemar_exact(0, 30), None)
    assert line.startswith("B is ahead by 75.0 points, 95% CI") and "unlikely to be noise" in line
    behind = paired_difference([1.0] * 30 + [1.0] * 10, [0.0] * 30 + [1.0] * 10, seed=0, resamples=500)
    assert plain_language(behind, mcnemar_exact(30, 0), None).startswith("A is ahead by 75.0 points")
    a = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    b = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    close = paired_difference(a, b, seed=0, resamples=500)
    d = [y - x for x, y in zip(a, b)]
    line = plain_language(close, mcnemar_exact(1, 2), items_needed(d))
    assert "within noise" in line and f"about {items_needed(d)} items would be needed" in line
