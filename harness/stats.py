"""Paired statistics between two runs on the same items, and agreement between two judges.

Formulas and references are in docs/statistics.md (Miller 2024, arXiv:2411.00640; McNemar 1947;
Cohen 1960). Everything is computed per item: samples of one item are not independent.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

import numpy as np

Z_975 = NormalDist().inv_cdf(0.975)  # two-sided alpha 0.05
Z_80 = NormalDist().inv_cdf(0.80)  # 80% power
EXACT_SIGN_FLIP_MAX_ITEMS = 16  # 2**16 sign patterns: enumerate; above that, draw them


@dataclass(frozen=True)
class PairedDifference:
    """Mean of per-item differences B - A, its clustered standard error and a bootstrap interval."""

    items: int
    mean_a: float
    mean_b: float
    diff: float
    stderr: float | None
    ci95: tuple[float, float]  # normal-theory interval, diff ± 1.96 SE
    bootstrap_ci95: tuple[float, float]


def paired_difference(a: Sequence[float], b: Sequence[float], seed: int = 0, resamples: int = 10_000) -> PairedDifference:
    """Per-item accuracies of run A and run B (same items, same order) to the paired difference B - A."""
    if len(a) != len(b) or not a:
        raise ValueError(f"need the same non-zero number of items in both runs, got {len(a)} and {len(b)}")
    d = [y - x for x, y in zip(a, b)]
    n = len(d)
    diff = sum(d) / n
    se = math.sqrt(_sample_var(d) / n) if n > 1 else None
    ci = (diff - Z_975 * se, diff + Z_975 * se) if se is not None else (diff, diff)
    return PairedDifference(n, sum(a) / n, sum(b) / n, diff, se, ci, bootstrap_ci(d, seed, resamples))


def _sample_var(xs: Sequence[float]) -> float:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def bootstrap_ci(d: Sequence[float], seed: int = 0, resamples: int = 10_000, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean of d over item resamples (items drawn with replacement, seeded)."""
    rng = np.random.default_rng(seed)
    values = np.asarray(d, dtype=float)
    n = len(values)
    chunk = max(1, 2_000_000 // n)  # bounded memory: 10,000 resamples of 50,000 items would be 4 GB at once
    means = np.concatenate([values[rng.integers(0, n, size=(min(chunk, resamples - done), n))].mean(axis=1)
                            for done in range(0, resamples, chunk)])
    means.sort()
    lo_i = int(math.floor((1 - level) / 2 * (resamples - 1)))
    hi_i = int(math.ceil((1 + level) / 2 * (resamples - 1)))
    return float(means[lo_i]), float(means[hi_i])


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p: discordant pairs under H0 are Binomial(a_only + b_only, 1/2)."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def sign_flip_test(d: Sequence[float], seed: int = 0, draws: int = 20_000) -> tuple[float, str]:
    """Paired permutation test of mean(d) = 0: flip each item's sign; returns (p, 'exact' or 'monte carlo')."""
    nonzero = np.asarray([x for x in d if x != 0], dtype=float)  # a zero difference is the same either way
    m = len(nonzero)
    if m == 0:
        return 1.0, "exact"
    observed = abs(nonzero.sum()) - 1e-9  # tolerance: the same sums of floats taken in another order
    if m <= EXACT_SIGN_FLIP_MAX_ITEMS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=m)))
        return float(np.mean(np.abs(signs @ nonzero) >= observed)), "exact"
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // m)
    total = nonzero.sum()
    # sum of signed d = 2 * (sum of the d kept positive) - sum of d: one random bit per item and draw
    hits = sum(int(np.sum(np.abs(2 * ((rng.random((min(chunk, draws - done), m)) < 0.5) @ nonzero) - total) >= observed))
               for done in range(0, draws, chunk))
    return (hits + 1) / (draws + 1), "monte carlo"


def items_needed(d: Sequence[float], effect: float | None = None) -> int | None:
    """Items a paired test needs to detect `effect` (default: the observed mean) at 80% power, alpha 0.05."""
    if len(d) < 2:
        return None
    effect = sum(d) / len(d) if effect is None else effect
    sd = math.sqrt(_sample_var(d))
    if effect == 0 or sd == 0:
        return None
    return math.ceil(((Z_975 + Z_80) * sd / abs(effect)) ** 2)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two raters' binary verdicts on the same samples; None when undefined."""
    n = len(a)
    if n == 0 or n != len(b):
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    if expected == 1:
        return None  # both raters constant and equal: agreement is total but kappa is 0/0
    return (observed - expected) / (1 - expected)


def plain_language(diff: PairedDifference, p_value: float, needed: int | None, name_a: str = "A",
                   name_b: str = "B") -> str:
    """One sentence a reader can act on: who is ahead, by how much, and whether it could be noise."""
    lo, hi = diff.bootstrap_ci95
    points = abs(100 * diff.diff)
    if p_value < 0.05 and (lo > 0 or hi < 0):
        ahead = name_b if diff.diff > 0 else name_a
        return (f"{ahead} is ahead by {points:.1f} points, 95% CI {100 * abs(lo if diff.diff > 0 else hi):.1f} "
                f"to {100 * abs(hi if diff.diff > 0 else lo):.1f}; unlikely to be noise (p = {p_value:.3g})")
    if needed is None:
        why = ("the mean difference is zero, so no number of items would show one" if diff.diff == 0
               else "too few items to estimate how many would be needed")
        return f"the difference ({100 * diff.diff:+.1f} points) is within noise (p = {p_value:.3g}); {why}"
    more = f"about {needed:,} items would be needed to detect it" if needed > diff.items else \
        "a rerun with more samples per item may settle it"
    return (f"the difference ({100 * diff.diff:+.1f} points, 95% CI {100 * lo:+.1f} to {100 * hi:+.1f}) "
            f"is within noise (p = {p_value:.3g}); {more}")
