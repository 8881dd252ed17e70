"""The run directory: every path and file name of a run and its grades, read and written safely."""
from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from harness.errors import RunDirError
from harness.grade_summary import GradeSummary, read_summary, write_summary
from harness.jsonl import iter_jsonl, read_jsonl_tolerant, write_json_atomic, write_jsonl_atomic
from harness.locks import LOCK_NAME, RunLock
from harness.run_spec import RunSpec
from records import GenerationRecord, GradeRecord, RecordError, check_schema_version

RUN_JSON = "run.json"
GENERATIONS = "generations.jsonl"
GRADES = "grades"
GRADE_SAMPLES = "samples.jsonl"  # grades/<judge>/: one grade per (item, sample)
SUMMARY = "summary.json"  # grades/<judge>/: the judge's numbers (harness.grade_summary)
# What generate writes into a run folder (its lock aside).
RUN_FILES = (RUN_JSON, GENERATIONS, GRADES)
# Written by `grade RUN --out DIR` into DIR: which run those grades belong to, so DIR opens like RUN.
GRADES_OF = "grades-of.json"


@dataclass
class Generations:
    """What generations.jsonl holds now: one record per (item, sample), and a skipped torn last line."""

    records: list[GenerationRecord]
    torn_line: int | None  # line number of an unfinished last line (a crash, or a generate still writing)

    def torn_note(self, path: Path) -> str | None:
        if self.torn_line is None:
            return None
        return (f"{path}:{self.torn_line}: unfinished last line skipped (a crashed or still running generate); "
                "a rerun of generate repairs it")


def safe_judge_dir_name(judge_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", judge_id)


# A judge's short name (what `grade --judge` takes) -> how its ids begin; the rest begin with "<name>-".
JUDGE_ID_PREFIX = {"rules+llm": "hybrid-"}


def judge_kind(name: str, kinds: Iterable[str]) -> str | None:
    """The short name a judge id begins with (`rules-v11` -> `rules`, `hybrid-...` -> `rules+llm`); None if none."""
    kinds = list(kinds)
    if name in kinds:
        return name
    return next((k for k in kinds if name.startswith(JUDGE_ID_PREFIX.get(k, k + "-"))), None)


def resolve_judge(name: str, available: list[str], where: Path | str) -> str:
    """The grades folder `name` stands for: a full judge id, or a short name (`rules`) that only one id here has."""
    if name in available:
        return name
    if safe_judge_dir_name(name) in available:
        return safe_judge_dir_name(name)
    prefix = JUDGE_ID_PREFIX.get(name, name + "-")
    matches = [j for j in available if j.startswith(prefix)]
    if len(matches) == 1:
        return matches[0]
    here = ", ".join(available) or "none"
    if matches:
        raise RunDirError(f"{where}: judge {name!r} could be any of {', '.join(matches)}; give the full id")
    raise RunDirError(f"{where}: no grades for {name}; judges here: {here}")


def read_grades_of(pointer: Path) -> str:
    try:
        run = json.loads(pointer.read_text(encoding="utf-8"))["run"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunDirError(f"{pointer}: unreadable ({type(exc).__name__}); "
                          'it should hold {"run": "/path/to/run"}') from None
    if not isinstance(run, str):
        raise RunDirError(f"{pointer}: field 'run' must be the path of a run directory")
    return run


def is_run_or_grades_dir(path: Path | str) -> bool:
    """A run directory, or a folder that `grade RUN --out DIR` wrote."""
    return (Path(path) / RUN_JSON).is_file() or (Path(path) / GRADES_OF).is_file()


class RunDir:
    """A run directory on disk; `grades_out` puts grades/ elsewhere (for a run that is read-only)."""

    def __init__(self, path: Path | str, grades_out: Path | str | None = None):
        self.path = Path(path)
        self.grades_root = Path(grades_out if grades_out is not None else path) / GRADES

    @classmethod
    def open(cls, path: Path | str) -> "RunDir":
        """The run at `path`; for a folder written by `grade RUN --out DIR`, RUN with its grades read from DIR."""
        pointer = Path(path) / GRADES_OF
        if (Path(path) / RUN_JSON).exists() or not pointer.is_file():
            return cls(path)
        run = read_grades_of(pointer)
        if not (Path(run) / RUN_JSON).is_file():
            raise RunDirError(f"{pointer}: holds grades of {run}, which is not a run directory (no {RUN_JSON}) any more")
        return cls(run, grades_out=path)

    @property
    def run_json(self) -> Path:
        return self.path / RUN_JSON

    @property
    def generations_path(self) -> Path:
        return self.path / GENERATIONS

    def judge_dir(self, judge_id: str) -> Path:
        return self.grades_root / safe_judge_dir_name(judge_id)

    def grades_path(self, judge_id: str) -> Path:
        return self.judge_dir(judge_id) / GRADE_SAMPLES

    def summary_path(self, judge_id: str) -> Path:
        return self.judge_dir(judge_id) / SUMMARY

    def resolve_judge(self, name: str) -> str:
        """The judge folder a short name (`rules`) or a full id (`rules-v11`) names in this run."""
        return resolve_judge(name, self.list_judges(), self.path)

    def generate_lock(self) -> RunLock:
        """The one-writer lock of generations.jsonl and run.json."""
        return RunLock(self.path / LOCK_NAME, f"generate into {self.path}")

    def judge_lock(self, judge_id: str) -> RunLock:
        """One grade per (run, judge); other judges grade the same run at the same time."""
        return RunLock(self.judge_dir(judge_id) / LOCK_NAME, f"grading {self.path} with judge {judge_id}")

    def exists(self) -> bool:
        return self.run_json.exists()

    def read_spec(self) -> RunSpec:
        if not self.run_json.exists():
            raise RunDirError(f"{self.path}: not a run directory (no {RUN_JSON}); create one with `python -m harness generate`")
        try:
            data = json.loads(self.run_json.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RunDirError(f"{self.run_json}: corrupt ({exc.msg})") from None
        try:
            check_schema_version(data, str(self.run_json))
            return RunSpec(**{k: v for k, v in data.items() if k in RunSpec.__dataclass_fields__})
        except RecordError as exc:
            raise RunDirError(str(exc)) from None
        except TypeError as exc:
            raise RunDirError(f"{self.run_json}: {exc}") from None

    def write_spec(self, spec: RunSpec) -> None:
        if not spec.created_at:
            spec.created_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write_json_atomic(self.run_json, asdict(spec))

    def read_generations(self) -> list[GenerationRecord]:
        """All generation records, latest per (item, sample) winning; reads only (see load_generations)."""
        return self.load_generations().records

    def load_generations(self) -> "Generations":
        """The records and the number of a torn last line that was skipped; the file is never written."""
        path = self.generations_path
        if not path.exists():
            return Generations([], None)
        lines, torn = read_jsonl_tolerant(path)
        latest: dict[tuple[str, int], GenerationRecord] = {}
        for lineno, obj in lines:
            try:
                rec = GenerationRecord.from_dict(obj, where=f"{path}:{lineno}")
            except (RecordError, TypeError) as exc:
                raise RunDirError(str(exc)) from None
            prev = latest.get(rec.key)
            # a finished record is never replaced by a later error for the same pair
            if prev is None or not prev.finished or rec.finished:
                latest[rec.key] = rec
        return Generations(list(latest.values()), torn)

    def compact_generations(self, keep: list[GenerationRecord]) -> None:
        """Rewrite generations.jsonl with exactly these records (one per pair), atomically."""
        write_jsonl_atomic(self.generations_path, (r.to_dict() for r in keep))

    def list_judges(self) -> list[str]:
        root = self.grades_root
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if (p / GRADE_SAMPLES).exists())

    def read_grades(self, judge_id: str) -> list[GradeRecord]:
        path = self.grades_path(judge_id)
        if not path.exists():
            raise RunDirError(f"{self.path}: no grades for judge {judge_id!r}; judges here: {', '.join(self.list_judges()) or 'none'}")
        out = []
        for lineno, obj in iter_jsonl(path):
            try:
                out.append(GradeRecord.from_dict(obj, where=f"{path}:{lineno}"))
            except (RecordError, TypeError) as exc:
                raise RunDirError(str(exc)) from None
        return out

    def read_summary(self, judge_id: str) -> GradeSummary:
        path = self.summary_path(judge_id)
        if not path.exists():
            raise RunDirError(f"{path}: missing; run `python -m harness grade {self.path}`")
        return read_summary(path)

    def write_summary(self, judge_id: str, summary: GradeSummary) -> None:
        write_summary(self.summary_path(judge_id), summary)
