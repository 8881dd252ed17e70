"""Read run and sweep directories into plain dicts for the HTML report (no formatting here)."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from harness.errors import RunDirError
from harness.grade_summary import GradeSummary
from records import GenerationRecord, GradeRecord
from harness.rundir import GENERATIONS, RunDir, RunSpec, is_run_or_grades_dir
from sweep.records import ResultsFile, SweepRecord


@dataclass
class RunData:
    """One run directory: its spec and, per judge, the summary and the grades."""

    rid: str  # short id used in file names and the page ("r0", "r1", ...)
    path: str
    spec: RunSpec
    summaries: dict[str, GradeSummary]  # judge dir name -> its summary.json
    grades: dict[str, dict[tuple[str, int], GradeRecord]] = field(default_factory=dict)

    def generations(self) -> Iterator[GenerationRecord]:
        """Generation records sorted by (item, sample); read when the sample pages are written."""
        return iter(sorted(RunDir.open(self.path).read_generations(), key=lambda r: (r.item_id, r.sample)))


@dataclass
class SweepData:
    label: str
    path: str
    records: list[SweepRecord]


def expand(paths: list[str]) -> tuple[list[Path], list[Path], list[str]]:
    """Split arguments into run dirs and sweep results files; a folder of them is opened one level down."""
    runs, sweeps, skipped = [], [], []

    def classify(p: Path) -> bool:
        if is_run_or_grades_dir(p):
            runs.append(p)
        elif p.is_file() and p.name.endswith(".jsonl") and p.name != GENERATIONS:
            sweeps.append(p)
        elif (p / "results.jsonl").is_file():
            sweeps.append(p / "results.jsonl")
        else:
            return False
        return True

    for raw in paths:
        p = Path(raw)
        if classify(p):
            continue
        if p.is_dir() and any([classify(child) for child in sorted(p.iterdir()) if child.is_dir()]):
            continue
        skipped.append(f"{raw}: neither a run directory (run.json) nor a sweep (results.jsonl)")
    return runs, sweeps, skipped


def load_run(rid: str, path: Path) -> RunData:
    run = RunDir.open(path)
    spec = run.read_spec()
    data = RunData(rid=rid, path=str(path), spec=spec, summaries={})
    for judge in run.list_judges():
        try:
            data.summaries[judge] = run.read_summary(judge)
        except RunDirError as exc:  # grades without a summary: keep the samples, say why the numbers are missing
            print(f"warning: {exc}", file=sys.stderr)
        data.grades[judge] = {g.key: g for g in run.read_grades(judge)}
    return data


def load_sweep(path: Path) -> SweepData:
    label = path.parent.name if path.name == "results.jsonl" else path.stem
    return SweepData(label=label, path=str(path), records=list(ResultsFile(path).latest().values()))


def load_all(paths: list[str]) -> tuple[list[RunData], list[SweepData], list[str]]:
    run_paths, sweep_paths, skipped = expand(paths)
    runs = [load_run(f"r{i}", p) for i, p in enumerate(run_paths)]
    sweeps = [load_sweep(p) for p in sweep_paths]
    return runs, sweeps, skipped


def accuracy_points(sweep: SweepData, speed_key: str, label_prefix: str, label_key: str) -> dict[str, Any] | None:
    """A sweep's graded points as (speed, Pass@1, stderr, valid, name) for the accuracy-beside-speed chart."""
    points = []
    for r in sweep.records:
        acc = r.accuracy or {}
        if r.status != "ok" or r.profiled or acc.get("pass@1") is None or not r.metrics.get(speed_key):
            continue
        name = f"{label_prefix}{r.point.get(label_key, '?')}"
        points.append((float(r.metrics[speed_key]), float(acc["pass@1"]), acc.get("pass@1_stderr"),
                       bool(acc.get("coverage_complete")), name))
    return {"label": sweep.label, "points": points} if points else None
