"""Sweep point records: one JSON line per point in sweeps/<tag>/results.jsonl, resumable."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from sweep.field_names import upgrade_metrics

# 2: the serving sweep writes vLLM's and InferenceX's field names; version-1 records are upgraded on load.
SCHEMA_VERSION = 2
STATUSES = ("ok", "oom", "error")
# A resumed sweep skips these; an "error" point is tried again (faults may be transient).
FINISHED_STATUSES = ("ok", "oom")


@dataclass
class SweepRecord:
    """The outcome of one sweep point, with what it measured and how."""

    tag: str
    kind: str  # prefill | decode | encoder | serve
    point: dict[str, Any]  # the point's parameters (batch tokens, requests, images, concurrency...)
    status: str  # ok | oom | error
    metrics: dict[str, Any] = field(default_factory=dict)
    definitions: dict[str, str] = field(default_factory=dict)  # metric name -> formula and units
    denominators: dict[str, Any] = field(default_factory=dict)  # what "per GPU" divides by
    steps: dict[str, int] = field(default_factory=dict)  # warmup and measured counts
    cost: dict[str, Any] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    profiled: bool = False
    accuracy: dict[str, Any] | None = None  # the point's configuration graded on an eval ([eval] in the tag)
    reason: str | None = None
    started_at: str = ""
    wall_s: float = 0.0
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    @property
    def key(self) -> str:
        return point_key(self.kind, self.point, self.profiled)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SweepRecord":
        known = set(cls.__dataclass_fields__)
        record = cls(**{k: v for k, v in data.items() if k in known})
        record.metrics = upgrade_metrics(record.kind, record.metrics, int(data.get("schema_version", 1)))
        return record


def point_key(kind: str, point: dict[str, Any], profiled: bool = False) -> str:
    """Identity of a point for resume: kind + parameters (+ profiled, never mixed with headline runs)."""
    return json.dumps({"kind": kind, "point": point, "profiled": bool(profiled)}, sort_keys=True)


class ResultsFile:
    """Append-only results.jsonl; a torn last line (crash mid-write) is repaired, never fatal."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def load(self) -> list[SweepRecord]:
        if not self.path.exists():
            return []
        records: list[SweepRecord] = []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                records.append(SweepRecord.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError, ValueError) as exc:
                if i == len(lines) - 1:
                    self._drop_torn_tail()
                    break
                raise ValueError(f"{self.path}:{i + 1}: not a sweep record ({exc})") from exc
        return records

    def latest(self) -> dict[str, SweepRecord]:
        """The last record per point key (a retried point supersedes its earlier error)."""
        return {r.key: r for r in self.load()}

    def finished_keys(self) -> set[str]:
        return {k for k, r in self.latest().items() if r.status in FINISHED_STATUSES}

    def append(self, record: SweepRecord) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record.to_dict(), sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _drop_torn_tail(self) -> None:
        data = self.path.read_bytes()
        cut = data.rstrip(b"\n").rfind(b"\n")
        self.path.write_bytes(data[: cut + 1] if cut >= 0 else b"")


def load_records(paths: Iterable[str | Path]) -> list[tuple[str, list[SweepRecord]]]:
    """(label, latest records) per results file, for plotting and --compare."""
    files = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            path = path / "results.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"results file not found: {path}")
        files.append(path)
    labels = [_label(f, depth=1) for f in files]
    if len(set(labels)) < len(labels):  # the same tag from two engines: name the folders above it
        labels = [_label(f, depth=2) for f in files]
    if len(set(labels)) < len(labels):
        labels = [str(f) for f in files]
    return [(label, list(ResultsFile(f).latest().values())) for label, f in zip(labels, files)]


def _label(path: Path, depth: int) -> str:
    """'tag' (depth 1) or 'parent/tag' (depth 2) for sweeps/<tag>/results.jsonl; the stem otherwise."""
    if path.name != "results.jsonl":
        return path.stem
    parts = path.resolve().parent.parts
    return "/".join(parts[-depth:])
