"""Sweep tags: sweep/configs/<tag>.toml (or a path to any .toml) loaded into a SweepConfig."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
KINDS = ("prefill", "decode", "encoder", "serve")


@dataclass(frozen=True)
class SweepConfig:
    """One tag: what to sweep, on which model and device, and how many steps to time."""

    tag: str
    kind: str
    points: list[int]  # prefill: batch tokens; decode: requests per rank; encoder: images; serve: concurrency
    path: str = ""
    description: str = ""
    model: str | None = None
    device: str = "cpu"
    dtype: str = "float32"
    threads: int | None = None
    warmup_steps: int = 1
    measured_steps: int = 3
    context: int | None = None  # prefill: tokens already in context; decode: KV length per request
    nextn: int = 0
    accept: float | None = None
    acceptance_seed: int = 0
    seed: int = 0
    parallel: dict[str, int | bool] = field(default_factory=lambda: {"dp": 1, "tp": 1, "ep": 1})
    engine: dict[str, Any] = field(default_factory=dict)  # passed to the built-in engine's config
    vision: dict[str, Any] = field(default_factory=dict)  # encoder: VisionConfig fields + weights path
    serve: dict[str, Any] = field(default_factory=dict)  # serve: endpoint, lengths, rates, SLOs
    eval: dict[str, Any] = field(default_factory=dict)  # prefill/decode: an eval graded at this configuration

    def __post_init__(self) -> None:
        where = self.path or self.tag
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not self.points or not all(isinstance(p, int) and p > 0 for p in self.points):
            raise ValueError(f"{where}: points must be a non-empty list of positive integers, got {self.points!r}")
        if self.warmup_steps < 0 or self.measured_steps < 1:
            raise ValueError(f"{where}: need warmup_steps >= 0 and measured_steps >= 1")
        if self.nextn < 0:
            raise ValueError(f"{where}: nextn must be >= 0, got {self.nextn}")
        if self.accept is not None and not 0.0 <= self.accept <= 1.0:
            raise ValueError(f"{where}: accept must be in [0, 1], got {self.accept}")
        unknown = set(self.parallel) - {"dp", "tp", "ep", "dp_attention"}
        if unknown:
            raise ValueError(f"{where}: unknown [parallel] key(s) {', '.join(sorted(unknown))}; "
                             "valid: dp, tp, ep, dp_attention")
        if not isinstance(self.parallel.get("dp_attention", False), bool):
            raise ValueError(f"{where}: [parallel] dp_attention must be true or false")
        if self.dp_attention and self.ep < 2:
            raise ValueError(f"{where}: [parallel] dp_attention needs ep >= 2 (it splits requests over the ep ranks)")
        bad = [k for k, v in self.parallel.items() if k != "dp_attention" and (not isinstance(v, int) or v < 1)]
        if bad:
            raise ValueError(f"{where}: [parallel] {', '.join(bad)} must be positive integers")
        split = [f"{k} = {self.parallel[k]}" for k in ("dp", "tp", "ep") if self.parallel.get(k, 1) > 1]
        if len(split) > 1:
            raise ValueError(f"{where}: [parallel] {' and '.join(split)} together are not supported; "
                             "use one of dp, tp, ep")
        if self.model_parallel > 1 and self.kind not in ("prefill", "decode"):
            raise ValueError(f"{where}: [parallel] tp/ep apply to the prefill and decode sweeps, not {self.kind}")

    @property
    def dp(self) -> int:
        return int(self.parallel.get("dp", 1))

    @property
    def tp(self) -> int:
        return int(self.parallel.get("tp", 1))

    @property
    def ep(self) -> int:
        return int(self.parallel.get("ep", 1))

    @property
    def dp_attention(self) -> bool:
        return bool(self.parallel.get("dp_attention", False))

    @property
    def attention_ranks(self) -> int:
        """Ranks that each run attention for their own requests: a decode point's R is per such rank."""
        return self.dp * (self.ep if self.dp_attention else 1)

    @property
    def model_parallel(self) -> int:
        """Processes one engine spans (tp or ep; 1 when each rank is its own engine)."""
        return self.tp * self.ep

    @property
    def world_size(self) -> int:
        """torchrun processes (= devices) the tag asks for."""
        return self.dp * self.model_parallel

    def with_overrides(self, **overrides: Any) -> "SweepConfig":
        """Apply CLI overrides (None means keep the config's value)."""
        changes = {k: v for k, v in overrides.items() if v is not None}
        return replace(self, **changes) if changes else self


def available_tags() -> list[str]:
    return sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))


def resolve(tag_or_path: str) -> Path:
    path = Path(tag_or_path)
    if path.suffix == ".toml" and path.exists():
        return path
    candidate = CONFIG_DIR / f"{tag_or_path}.toml"
    if candidate.exists():
        return candidate
    raise FileNotFoundError(
        f"no sweep config {tag_or_path!r}: looked for {path if path.suffix == '.toml' else candidate}; "
        f"available tags: {', '.join(available_tags()) or 'none'}")


def load_config(tag_or_path: str) -> SweepConfig:
    """Parse a tag's TOML; unknown keys are errors naming the key and the file."""
    path = resolve(tag_or_path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML ({exc})") from exc
    names = {f.name for f in fields(SweepConfig)} - {"tag", "path"}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(names))}")
    if "kind" not in data or "points" not in data:
        raise ValueError(f"{path}: 'kind' and 'points' are required")
    return SweepConfig(tag=path.stem, path=str(path), **data)
