"""Cost per million tokens from GPU-hour price, power, PUE and electricity price."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

FORMULA = ("$/M tokens = 1e6 * (price_per_gpu_hour + power_kw * pue * price_per_kwh)"
           " / (3600 * tokens_per_s_per_gpu * utilization)")


@dataclass(frozen=True)
class CostInputs:
    """Everything the cost formula needs; stored verbatim in each record."""

    price_per_gpu_hour: float = 0.0  # $ per GPU-hour (rental or amortised purchase)
    utilization: float = 1.0  # fraction of wall time the GPU does this work
    power_kw: float = 0.0  # average draw per GPU, kW
    pue: float = 1.0  # data-centre power usage effectiveness
    price_per_kwh: float = 0.0  # $ per kWh

    def __post_init__(self) -> None:
        for name in ("price_per_gpu_hour", "power_kw", "price_per_kwh"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 < self.utilization <= 1:
            raise ValueError(f"utilization must be in (0, 1], got {self.utilization}")
        if self.pue < 1:
            raise ValueError(f"pue must be >= 1, got {self.pue}")

    @property
    def dollars_per_gpu_hour(self) -> float:
        return self.price_per_gpu_hour + self.power_kw * self.pue * self.price_per_kwh

    @property
    def enabled(self) -> bool:
        return self.dollars_per_gpu_hour > 0


def dollars_per_million(tokens_per_s_per_gpu: float, inputs: CostInputs) -> float | None:
    """$ per million tokens at the given per-GPU rate; None when the rate is zero or unknown."""
    if not tokens_per_s_per_gpu or tokens_per_s_per_gpu <= 0:
        return None
    return 1e6 * inputs.dollars_per_gpu_hour / (3600.0 * tokens_per_s_per_gpu * inputs.utilization)


def cost_block(rates: dict[str, float | None], inputs: CostInputs) -> dict[str, Any] | None:
    """Record block: inputs, formula, and $/M for each named per-GPU rate (e.g. output tokens)."""
    if not inputs.enabled:
        return None
    return {
        "inputs": asdict(inputs),
        "formula": FORMULA,
        "dollars_per_million": {name: dollars_per_million(rate or 0.0, inputs) for name, rate in rates.items()},
    }
