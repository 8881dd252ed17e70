"""InferenceX's cost per million tokens at its three price tiers: hyperscaler, neocloud, 3-year rental.

cost = $ per GPU-hour / (tokens per second per GPU x 3600 / 1e6), for total tokens (`costh`, `costn`,
`costr`) and output tokens only (`costhOutput`, ...), as the InferenceX dashboard defines them
(SemiAnalysisAI/InferenceX-app, docs/data-transforms.md and docs/tco-calculator.md).
"""
from __future__ import annotations

from typing import Any

TIERS = {"h": "hyperscaler", "n": "neocloud", "r": "3-year rental"}
# $ per GPU-hour per tier (hyperscaler, neocloud, 3-year rental) as published in InferenceX-app
# packages/app/src/lib/constants.ts (GPU_SPECS, commit 77f3e68, April 2026), where InferenceX credits the
# SemiAnalysis AI Cloud TCO Model. Only the numbers are taken; pass --tier-prices for any other device.
TIER_PRICES: dict[str, tuple[float, float, float]] = {
    "h100": (1.30, 1.69, 1.30),
    "h200": (1.41, 1.74, 1.60),
    "b200": (1.95, 2.34, 2.90),
    "gb200": (2.21, 2.75, 3.30),
    "mi300x": (1.12, 1.40, 1.55),
    "mi325x": (1.28, 1.59, 1.80),
    "mi355x": (1.48, 1.90, 2.10),
}
SOURCE = "InferenceX-app packages/app/src/lib/constants.ts GPU_SPECS (commit 77f3e68)"


def parse_tier_prices(text: str) -> dict[str, float]:
    """'h=1.41,n=1.74,r=1.6' -> {'h': 1.41, 'n': 1.74, 'r': 1.6}; every tier is required."""
    prices: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in TIERS:
            raise ValueError(f"--tier-prices: {part!r} is not h=PRICE, n=PRICE or r=PRICE ($ per GPU-hour)")
        try:
            prices[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--tier-prices: {value!r} is not a number") from None
    if set(prices) != set(TIERS) or min(prices.values()) < 0:
        raise ValueError("--tier-prices needs h, n and r, each >= 0 ($ per GPU-hour), e.g. h=1.41,n=1.74,r=1.6")
    return prices


def tier_prices(gpu_type: str | None, explicit: dict[str, float] | None) -> tuple[dict[str, float], str] | None:
    """($/GPU-hour per tier, where they came from), or None when neither a known GPU nor prices are given."""
    if explicit:
        return explicit, "--tier-prices"
    if not gpu_type:
        return None
    base = gpu_type.lower().replace("-", "_").split("_")[0]
    if base not in TIER_PRICES:
        raise ValueError(f"gpu_type {gpu_type!r} has no InferenceX price tiers; known: {', '.join(TIER_PRICES)}; "
                         "pass --tier-prices h=..,n=..,r=.. instead")
    return dict(zip(TIERS, TIER_PRICES[base])), f"{SOURCE}, {base}"


def tier_costs(tput_per_gpu: float | None, output_tput_per_gpu: float | None,
               prices: dict[str, float]) -> dict[str, Any]:
    """`costh/costn/costr` ($/M total tokens) and `costhOutput/...` ($/M output tokens)."""
    def per_million(price: float, rate: float | None) -> float | None:
        return price / (rate * 3600 / 1e6) if rate else None

    out: dict[str, Any] = {}
    for tier, price in prices.items():
        out[f"cost{tier}"] = per_million(price, tput_per_gpu)
        out[f"cost{tier}Output"] = per_million(price, output_tput_per_gpu)
    return out
