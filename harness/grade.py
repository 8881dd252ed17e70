"""The grade stage: one judge over a run's generations, then its summary. Never touches generations."""
from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from harness.errors import RunDirError
from harness.grade_summary import GradeSummary
from harness.jsonl import remove_orphan_temps, write_jsonl_atomic
from harness.locks import CannotWrite, lock_holder_if_locked
from harness.metrics import score_table
from harness.progress import Progress
from records.provenance import provenance
from records import FINISH_REASONS, GRADE_STATUSES, GenerationRecord, GradeRecord
from harness.out_folders import check_grades_out, link_grades_dir
from harness.rundir import GRADE_SAMPLES, SUMMARY, RunDir, RunSpec
from judges import Judge, JudgeConfigError, Verdict
from judges.rules.grade_workers import grade_in_workers
from tasks import get_task

DECIDERS = ("rules", "llm")  # values of detail.decided_by (the rules+llm judge), counted in summary.json


def judgeable(record: GenerationRecord) -> bool:
    """A generation a judge may read: it finished (stop or length); errors and unknown finish reasons are not."""
    return record.finish_reason in ("stop", "length")


def to_grade(record: GenerationRecord, verdict: Verdict | None, judge_id: str) -> GradeRecord:
    """Combine a judge's verdict with what the generation itself says (errors, truncation)."""
    if record.finish_reason == "error":
        status, correct, extracted, detail = "generation_error", None, None, {"error": record.error}
    elif record.finish_reason not in FINISH_REASONS:
        status, correct, extracted = "generation_error", None, None
        detail = {"error": f"unknown finish_reason {record.finish_reason!r} (expected one of "
                           f"{', '.join(FINISH_REASONS)}); not graded"}
    else:
        assert verdict is not None
        status, correct, extracted, detail = verdict.status, verdict.correct, verdict.extracted, dict(verdict.detail)
        if status not in GRADE_STATUSES:
            status, correct = "judge_error", None
            detail["error"] = f"judge returned unknown status {verdict.status!r}"
        elif status in ("no_answer", "ambiguous"):
            correct = False  # an unread or self-contradicting answer is never correct
            if status == "no_answer" and record.finish_reason == "length":
                status = "truncated"  # hit the token cap before committing an answer
        elif status == "judge_error":
            correct = None
        elif status == "graded" and not isinstance(correct, bool):
            status, correct = "judge_error", None
            detail["error"] = f"judge graded without a true/false verdict (correct={verdict.correct!r})"
    return GradeRecord(
        item_id=record.item_id, sample=record.sample, correct=correct, extracted=extracted, status=status,
        judge=judge_id, category=record.category, target=record.target, detail=detail,
    )


async def _judge_all(judge: Judge, records: list[GenerationRecord], concurrency: int, show: bool) -> list[GradeRecord]:
    progress = Progress(total=len(records), desc=f"grade {judge.judge_id}", enabled=show)
    out: list[GradeRecord | None] = [None] * len(records)
    try:
        if not judge.is_async and getattr(judge, "worker_limit_s", None):
            # Worker processes under a per-sample limit kept from outside the judge (docs/grading.md).
            verdicts = grade_in_workers(judge, [(i, r) for i, r in enumerate(records) if judgeable(r)],
                                        judge.worker_limit_s, progress.update)
            out = [to_grade(rec, verdicts.get(i), judge.judge_id) for i, rec in enumerate(records)]
        elif not judge.is_async:
            for i, rec in enumerate(records):
                out[i] = to_grade(rec, _safe_grade(judge, rec) if judgeable(rec) else None, judge.judge_id)
                if i % 1024 == 1023:
                    progress.update(1024)
            progress.update(len(records) % 1024)
        else:
            semaphore = asyncio.Semaphore(max(1, concurrency))
            errors = 0

            async def one(i: int, rec: GenerationRecord) -> None:
                nonlocal errors
                verdict = None
                if judgeable(rec):
                    async with semaphore:
                        verdict = await _safe_agrade(judge, rec)
                out[i] = to_grade(rec, verdict, judge.judge_id)
                errors += out[i].status == "judge_error"
                progress.update(1, judge_errors=errors)

            await asyncio.gather(*(one(i, r) for i, r in enumerate(records)))
    finally:
        progress.close()
    return [g for g in out if g is not None]


def _safe_grade(judge: Judge, rec: GenerationRecord) -> Verdict:
    try:
        return judge.grade(rec)
    except JudgeConfigError:
        raise  # every sample would fail the same way: stop with the message instead of a wall of judge_errors
    except Exception as exc:  # a judge bug on one response must not lose the others' grades
        return Verdict(correct=None, extracted=None, status="judge_error", detail={"error": f"{type(exc).__name__}: {exc}"})


async def _safe_agrade(judge: Judge, rec: GenerationRecord) -> Verdict:
    try:
        return await judge.agrade(rec)
    except JudgeConfigError:
        raise
    except Exception as exc:
        return Verdict(correct=None, extracted=None, status="judge_error", detail={"error": f"{type(exc).__name__}: {exc}"})


def decided_by_counts(grades: list[GradeRecord]) -> dict[str, int]:
    """decided_by_rules / decided_by_llm for a judge that records which of its parts decided; else nothing."""
    deciders = Counter(g.detail.get("decided_by") for g in grades if g.detail.get("decided_by") is not None)
    return {f"decided_by_{name}": deciders.get(name, 0) for name in DECIDERS} if deciders else {}


def build_summary(spec: RunSpec, records: list[GenerationRecord], grades: list[GradeRecord], judge: Judge,
                  task_metrics: dict[str, Any]) -> GradeSummary:
    expected = spec.expected_keys()
    by_key = {g.key: g for g in grades}
    generated = sum(1 for r in records if r.finished)
    counts = Counter(g.status for g in grades)
    missing = [k for k in expected if k not in by_key]
    incomplete = [k for k in expected if k not in by_key or by_key[k].status in ("generation_error", "judge_error")]
    categories = {r.item_id: r.category for r in records}
    table = score_table(expected, {k: g.correct for k, g in by_key.items()}, categories)
    completion_tokens = [r.usage.get("completion_tokens", 0) for r in records if r.finished]
    summary = GradeSummary(
        task=spec.task,
        judge={"id": judge.judge_id, "config": judge.config()},
        pass1=table["pass@1"],
        pass1_stderr=table["pass@1_stderr"],
        pass1_valid=not incomplete,
        coverage_complete=not incomplete,
        pass_k=table["pass@k"],
        counts={
            "expected": len(expected),
            "generated": generated,
            **{status: counts.get(status, 0) for status in GRADE_STATUSES},
            "missing": len(missing),
            **decided_by_counts(grades),
        },
        items=len(spec.item_ids),
        samples_per_item=spec.samples,
        mean_completion_tokens=(sum(completion_tokens) / len(completion_tokens)) if completion_tokens else None,
        per_category=table["per_category"],
        per_item=table["per_item"],
        task_options=spec.task_options,
        provenance={
            "dataset": {"path": spec.dataset_path, "sha256": spec.dataset_sha256, "source": spec.dataset_source},
            "generation": spec.provenance,
            "grading": provenance(),
            "engine": spec.engine,
            "sampling": spec.sampling,
            "seed": spec.seed,
        },
        graded_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        task_metrics=task_metrics,
    )
    if incomplete:
        summary.note = (f"coverage incomplete: {len(incomplete)} of {len(expected)} expected samples lack a finished "
                        "generation or a grade; pass@1 is not valid (rerun generate, then grade)")
    return summary


async def grade_run(run_path: Path, judge: Judge, concurrency: int = 16, show_progress: bool = True,
                    grades_out: Path | None = None) -> GradeSummary:
    """Grade every generation of a run with one judge; replace only that judge's folder.

    Reads the run and never writes generations.jsonl; grades go to grades/<judge-id>/ under the run,
    or under `grades_out` (for a run that is read-only). One grade per (run, judge) at a time.
    """
    if grades_out is not None:
        check_grades_out(grades_out, run_path)  # before anything is created in that folder
        if Path(grades_out).resolve() == Path(run_path).resolve():
            grades_out = None  # `--out RUN` is plain `grade RUN`
    run = RunDir(run_path, grades_out) if grades_out is not None else RunDir.open(run_path)
    spec = run.read_spec()
    judge.check_task(spec.task)
    generations = run.load_generations()  # a bad record stops here, before anything is written
    try:
        lock = run.judge_lock(judge.judge_id).acquire()
    except CannotWrite as exc:
        if grades_out is not None:
            raise
        raise RunDirError(f"{exc}; grade into another folder with --out DIR (grades go to DIR/grades/)") from None
    with lock:  # taken first: it turns an unwritable DIR into one clear line
        for tmp in remove_orphan_temps(run.judge_dir(judge.judge_id), (GRADE_SAMPLES, SUMMARY)):
            print(f"note: removed {tmp}, left by a grade that was killed while writing", file=sys.stderr)
        if grades_out is not None:
            link_grades_dir(grades_out, run_path)  # so summary, compare, report and grade open DIR like the run
        if hasattr(judge, "bind_grades_dir"):
            judge.bind_grades_dir(run.judge_dir(judge.judge_id))  # an LLM judge's verdict cache beside its grades
        expected = set(spec.expected_keys())
        records = sorted((r for r in generations.records if r.key in expected), key=lambda r: (r.item_id, r.sample))
        grades = await _judge_all(judge, records, concurrency, show_progress)
        task = get_task(spec.task, **spec.task_options)
        metrics = task.summary_metrics(grades, records, spec.expected_keys())
        summary = build_summary(spec, records, grades, judge, metrics)
        summary.add_notes(generations.torn_note(run.generations_path), _live_generate_note(run))
        write_jsonl_atomic(run.grades_path(judge.judge_id), (g.to_dict() for g in grades))
        run.write_summary(judge.judge_id, summary)
    return summary


def _live_generate_note(run: RunDir) -> str | None:
    holder = lock_holder_if_locked(run.generate_lock().path)
    if holder is None:
        return None
    return f"generate is still writing this run ({holder.describe()}): these grades cover the records finished so far"
