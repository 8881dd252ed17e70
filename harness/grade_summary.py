"""summary.json as a typed record: the one module that writes and reads it (old files still read)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.errors import RunDirError
from harness.jsonl import write_json_atomic

# JSON key -> field name, in the order the file has always been written; keys that are not identifiers differ.
KEY_TO_FIELD = {
    "task": "task", "judge": "judge", "pass@1": "pass1", "pass@1_stderr": "pass1_stderr",
    "pass@1_valid": "pass1_valid", "coverage_complete": "coverage_complete", "pass@k": "pass_k",
    "counts": "counts", "items": "items", "samples_per_item": "samples_per_item",
    "mean_completion_tokens": "mean_completion_tokens", "per_category": "per_category", "per_item": "per_item",
    "task_options": "task_options", "provenance": "provenance", "graded_at": "graded_at", "note": "note",
}


@dataclass(frozen=True)
class GroupScore:
    """One row of per_category (items) or per_item (samples, correct): Pass@1 over its samples."""

    pass1: float | None
    pass1_stderr: float | None = None
    items: int | None = None
    samples: int | None = None
    correct: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GroupScore":
        return cls(pass1=data.get("pass@1"), pass1_stderr=data.get("pass@1_stderr"), items=data.get("items"),
                   samples=data.get("samples"), correct=data.get("correct"))


@dataclass(frozen=True)
class HleScores:
    """HLE's official numbers (in percent) among a summary's task metrics."""

    accuracy: float
    accuracy_ci95_half_width: float | None = None
    accuracy_n: int | None = None
    calibration_error: float | None = None  # None: fewer judged samples with a confidence than one bin
    calibration_error_corrected: float | None = None
    calibration_not_computable: str | None = None  # why calibration_error is None


@dataclass
class GradeSummary:
    """One judge's numbers for one run (grades/<judge>/summary.json); task metrics sit at the top level of the file."""

    task: str
    judge: dict[str, Any]  # {"id": ..., "config": {...}}
    pass1: float | None
    pass1_stderr: float | None
    coverage_complete: bool  # every expected sample has a finished generation and a grade: Pass@1 is valid
    counts: dict[str, int]
    pass1_valid: bool = False
    pass_k: dict[str, Any] = field(default_factory=dict)
    items: int = 0
    samples_per_item: int = 1
    mean_completion_tokens: float | None = None
    per_category: dict[str, Any] = field(default_factory=dict)
    per_item: dict[str, Any] = field(default_factory=dict)
    task_options: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    graded_at: str = ""
    note: str | None = None
    task_metrics: dict[str, Any] = field(default_factory=dict)  # e.g. HLE accuracy and calibration error

    @property
    def judge_id(self) -> str:
        return self.judge["id"]

    @property
    def judge_config(self) -> dict[str, Any]:
        return self.judge.get("config") or {}

    @property
    def hle(self) -> HleScores | None:
        """HLE's accuracy and calibration error; None for a summary without them (other tasks)."""
        if self.task_metrics.get("accuracy") is None:
            return None
        return HleScores(**{f.name: self.task_metrics.get(f.name) for f in fields(HleScores)})

    def category_scores(self) -> dict[str, GroupScore]:
        return {name: GroupScore.from_dict(row) for name, row in (self.per_category or {}).items()}

    def item_scores(self) -> dict[str, GroupScore]:
        return {name: GroupScore.from_dict(row) for name, row in (self.per_item or {}).items()}

    def add_notes(self, *notes: str | None) -> None:
        """Join notes (torn tail, a generate still running) onto the one already there."""
        self.note = "; ".join(n for n in (self.note, *notes) if n) or None

    def to_dict(self) -> dict[str, Any]:
        out = {key: getattr(self, name) for key, name in KEY_TO_FIELD.items() if key != "note"}
        if self.note:
            out["note"] = self.note
        return {**out, **self.task_metrics}

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "a grade summary") -> "GradeSummary":
        """Read a summary of any age; keys this record does not name are the task's metrics."""
        if not isinstance(data, dict):
            raise RunDirError(f"{where}: expected a JSON object, got {type(data).__name__}")
        for key in ("task", "judge", "counts"):
            if key not in data:
                raise RunDirError(f"{where}: field {key!r} missing; grade the run again")
        if not isinstance(data["judge"], dict) or "id" not in data["judge"]:
            raise RunDirError(f"{where}: field 'judge' must be an object with an 'id'")
        known = {name: data[key] for key, name in KEY_TO_FIELD.items() if key in data}
        known.setdefault("pass1", None)
        known.setdefault("pass1_stderr", None)
        known["coverage_complete"] = bool(data.get("coverage_complete"))
        return cls(**known, task_metrics={k: v for k, v in data.items() if k not in KEY_TO_FIELD})


def write_summary(path: Path, summary: GradeSummary) -> None:
    write_json_atomic(path, summary.to_dict())


def read_summary(path: Path) -> GradeSummary:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{path}: corrupt ({exc.msg} at line {exc.lineno})") from None
    return GradeSummary.from_dict(data, where=str(path))
