"""Typed, versioned records written to a run directory."""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from functools import lru_cache
from typing import Any

SCHEMA_VERSION = 1

GRADE_STATUSES = ("graded", "no_answer", "truncated", "generation_error", "judge_error")
FINISH_REASONS = ("stop", "length", "error")


class RecordError(ValueError):
    """A record that does not match its schema."""


def _from_dict(cls, data: dict[str, Any], where: str):
    names, required = _schema(cls)
    if not required <= data.keys():
        raise RecordError(f"{where}: missing field(s) {', '.join(sorted(required - data.keys()))}")
    return cls(**{k: v for k, v in data.items() if k in names})


@lru_cache(maxsize=None)
def _schema(cls) -> tuple[frozenset[str], frozenset[str]]:
    names = frozenset(f.name for f in fields(cls))
    required = frozenset(f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING)
    return names, required


def _shallow_dict(record: Any) -> dict[str, Any]:
    # dataclasses.asdict deep-copies every nested value; records only need their top level for JSON
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


@dataclass
class GenerationRecord:
    """One (item, sample) generation: enough on its own to be graded."""

    task: str
    item_id: str
    sample: int
    messages: list[dict[str, Any]]
    target: str
    response: str
    finish_reason: str
    usage: dict[str, int]
    latency_s: float
    engine: dict[str, Any]
    seed: int | None
    error: str | None = None
    category: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # task detail, e.g. GPQA permutation and gold letter
    attempts: int = 1
    schema_version: int = SCHEMA_VERSION

    @property
    def key(self) -> tuple[str, int]:
        return (self.item_id, self.sample)

    @property
    def finished(self) -> bool:
        return self.finish_reason in ("stop", "length")

    def to_dict(self) -> dict[str, Any]:
        return _shallow_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "record") -> "GenerationRecord":
        return _from_dict(cls, data, where)


@dataclass
class GradeRecord:
    """One judge verdict for one generation record."""

    item_id: str
    sample: int
    correct: bool | None
    extracted: str | None
    status: str  # one of GRADE_STATUSES
    judge: str
    category: str | None = None
    target: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @property
    def key(self) -> tuple[str, int]:
        return (self.item_id, self.sample)

    def to_dict(self) -> dict[str, Any]:
        return _shallow_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "record") -> "GradeRecord":
        return _from_dict(cls, data, where)
