"""Pass@k and its uncertainty, computed over every expected sample (missing ones count as wrong)."""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one item with n samples of which c are correct (Chen et al., 2021)."""
    if k > n:
        raise ValueError(f"k={k} exceeds samples n={n}")
    if n - c < k:
        return 1.0
    # 1 - C(n-c, k) / C(n, k), as a product to stay exact-ish for large n
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def clustered_stderr(item_means: list[float]) -> float | None:
    """Standard error of the mean of per-item means: samples of one item are not independent."""
    n = len(item_means)
    if n < 2:
        return None
    mean = sum(item_means) / n
    var = sum((m - mean) ** 2 for m in item_means) / (n - 1)
    return math.sqrt(var / n)


def k_values(samples: int) -> list[int]:
    ks, k = [], 1
    while k <= samples:
        ks.append(k)
        k *= 2
    if samples not in ks:
        ks.append(samples)
    return ks


def score_table(
    expected: Iterable[tuple[str, int]],
    correct: dict[tuple[str, int], bool | None],
    categories: dict[str, str | None],
) -> dict[str, Any]:
    """pass@1, clustered SE, pass@k, per-item and per-category tables over the expected samples."""
    per_item_n: dict[str, int] = defaultdict(int)
    per_item_c: dict[str, int] = defaultdict(int)
    for key in expected:
        item_id = key[0]
        per_item_n[item_id] += 1
        if correct.get(key) is True:
            per_item_c[item_id] += 1
    items = list(per_item_n)
    if not items:
        return {"pass@1": None, "pass@1_stderr": None, "pass@k": {}, "per_item": {}, "per_category": {}}
    means = [per_item_c[i] / per_item_n[i] for i in items]
    samples = min(per_item_n.values())
    pass_k = {}
    for k in k_values(samples):
        pass_k[f"pass@{k}"] = sum(pass_at_k(per_item_n[i], per_item_c[i], k) for i in items) / len(items)
    by_cat: dict[str, list[float]] = defaultdict(list)
    for i, m in zip(items, means):
        by_cat[categories.get(i) or "uncategorised"].append(m)
    return {
        "pass@1": sum(means) / len(means),
        "pass@1_stderr": clustered_stderr(means),
        "pass@k": pass_k,
        "per_item": {i: {"samples": per_item_n[i], "correct": per_item_c[i], "pass@1": m} for i, m in zip(items, means)},
        "per_category": {
            cat: {"items": len(ms), "pass@1": sum(ms) / len(ms), "pass@1_stderr": clustered_stderr(ms)}
            for cat, ms in sorted(by_cat.items())
        },
    }
