import itertools
import math

import pytest

from harness.metrics import clustered_stderr, pass_at_k, score_table


def brute_pass_at_k(outcomes, k):
    combos = list(itertools.combinations(outcomes, k))
    return sum(any(c) for c in combos) / len(combos)


@pytest.mark.parametrize("n,c,k", [(8, 0, 1), (8, 3, 1), (8, 3, 2), (8, 3, 4), (8, 8, 8), (6, 1, 6), (5, 2, 3)])
def test_pass_at_k_is_unbiased_estimator(n, c, k):
    outcomes = [True] * c + [False] * (n - c)
    assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(outcomes, k))


def test_clustered_stderr_uses_item_means():
    means = [1.0, 0.0, 0.5, 0.5]
    mean = 0.5
    expected = math.sqrt(sum((m - mean) ** 2 for m in means) / 3 / 4)
    assert clustered_stderr(means) == pytest.approx(expected)
    assert clustered_stderr([0.3]) is None


def test_missing_samples_count_as_wrong_and_tables_cover_every_item():
    expected = [(i, s) for i in ("a", "b") for s in range(4)]
    correct = {("a", 0): True, ("a", 1): True, ("b", 0): False}  # the rest missing
    table = score_table(expected, correct, {"a": "alg", "b": None})
    assert table["pass@1"] == pytest.approx((2 / 4 + 0 / 4) / 2)
    assert table["per_item"]["a"] == {"samples": 4, "correct": 2, "pass@1": 0.5}
    assert set(table["pass@k"]) == {"pass@1", "pass@2", "pass@4"}
    assert table["pass@k"]["pass@4"] == pytest.approx(0.5)
    assert table["per_category"]["alg"]["items"] == 1
    assert table["per_category"]["uncategorised"]["pass@1"] == 0
