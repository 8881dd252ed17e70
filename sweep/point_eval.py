"""Accuracy beside speed: the sweep's engine configuration also generates and grades an eval.

A tag's `[eval]` table (task, limit, samples, ...) runs the harness's own generate and grade stages on the
built-in engine built exactly as the sweep builds it (model, device, dtype, 4-bit codes, speculative nextn,
[engine] options), writes the eval run under sweeps/<tag>/evals/<config-id>/, and every point of the sweep
records its Pass@1, standard error and coverage. A rerun reuses a complete eval of the same configuration.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweep.config import SweepConfig
from sweep.engine_session import engine_options

if TYPE_CHECKING:
    from harness.grade_summary import GradeSummary

EVAL_KEYS = {"task", "limit", "samples", "data", "max_tokens", "concurrency", "seed", "judge"}
ENGINE_KINDS = ("prefill", "decode")


@dataclass(frozen=True)
class EvalSpec:
    """What to evaluate at the sweep's configuration."""

    task: str
    limit: int | None = None
    samples: int | None = None  # default: the task's own samples per item
    data: str | None = None  # default: the task's documented path, else its demo set
    max_tokens: int = 1024
    concurrency: int = 16
    seed: int = 0
    judge: str = "rules"


def eval_spec(cfg: SweepConfig) -> EvalSpec | None:
    """The tag's [eval] table, checked; None without one."""
    if not cfg.eval:
        return None
    where = cfg.path or cfg.tag
    unknown = sorted(set(cfg.eval) - EVAL_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown [eval] key(s) {', '.join(unknown)}; valid: {', '.join(sorted(EVAL_KEYS))}")
    if "task" not in cfg.eval:
        raise ValueError(f'{where}: [eval] needs task, e.g. task = "gpqa"')
    if cfg.kind not in ENGINE_KINDS:
        raise ValueError(f"{where}: [eval] applies to sweeps of the built-in engine ({', '.join(ENGINE_KINDS)}), "
                         f"not {cfg.kind}")
    if cfg.model_parallel > 1 or cfg.dp > 1:
        raise ValueError(f"{where}: [eval] with a parallel layout is not supported yet; evaluate the same model "
                         "with `harness generate --tp/--ep` instead")
    spec = EvalSpec(**cfg.eval)
    for name in ("limit", "samples"):
        value = getattr(spec, name)
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"{where}: [eval] {name} must be a positive integer, got {value!r}")
    if spec.judge != "rules":
        raise ValueError(f"{where}: [eval] judge must be 'rules' (an LLM judge needs its own server)")
    return spec


def config_id(cfg: SweepConfig, device: str, spec: EvalSpec) -> str:
    """Short hash of everything that changes the eval's answers: engine configuration and the eval itself."""
    key = {"model": cfg.model, "device": device, "dtype": cfg.dtype, "nextn": cfg.nextn, "engine": cfg.engine,
           "parallel": cfg.parallel, "eval": asdict(spec)}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]


def evaluate(cfg: SweepConfig, device: str, out_dir: Path) -> dict[str, Any] | None:
    """Generate and grade the tag's eval at its engine configuration; the accuracy block every point records."""
    spec = eval_spec(cfg)
    if spec is None:
        return None
    run_dir = out_dir / "evals" / config_id(cfg, device, spec)
    summary = _finished_summary(run_dir, spec.judge)
    if summary is None:
        print(f"eval: {spec.task} at this configuration -> {run_dir}", file=sys.stderr)
        summary = asyncio.run(_generate_and_grade(cfg, device, spec, run_dir))
    counts = summary.counts
    return {"task": spec.task, "judge": summary.judge_id, "run_dir": str(run_dir),
            "pass@1": summary.pass1, "pass@1_stderr": summary.pass1_stderr,
            "coverage_complete": summary.coverage_complete, "expected": counts.get("expected"),
            "graded": counts.get("graded"), "items": summary.items,
            "samples_per_item": summary.samples_per_item,
            "configuration": {"dtype": cfg.dtype, "nextn": cfg.nextn, "engine": cfg.engine, "parallel": cfg.parallel}}


def _finished_summary(run_dir: Path, judge: str) -> GradeSummary | None:
    """A complete earlier eval of the same configuration (resume), else None."""
    from harness.grade_summary import read_summary
    from harness.rundir import RunDir
    from judges import create_judge

    path = RunDir(run_dir).summary_path(create_judge(judge).judge_id)
    if not path.is_file():
        return None
    summary = read_summary(path)
    return summary if summary.coverage_complete else None


async def _generate_and_grade(cfg: SweepConfig, device: str, spec: EvalSpec, run_dir: Path) -> GradeSummary:
    from engine import SamplingParams, create_engine
    from harness.generate import GenerateConfig, limit_items, load_task_data, run_generation
    from harness.grade import grade_run
    from judges import create_judge
    from tasks import get_task

    task = get_task(spec.task)
    data_path, dataset = load_task_data(task, spec.data)
    items = limit_items(dataset.items, spec.limit)
    gen = GenerateConfig(task=task, data_path=data_path, out=run_dir,
                         samples=spec.samples or task.default_samples, limit=spec.limit,
                         sampling=SamplingParams(max_tokens=spec.max_tokens, temperature=0.0), seed=spec.seed,
                         concurrency=spec.concurrency, progress=False, dataset_source=dataset.source)
    engine = create_engine("native", engine_options(cfg, device))
    try:
        await run_generation(gen, engine, items, cfg.model)
    finally:
        await engine.aclose()
    return await grade_run(run_dir, create_judge(spec.judge), show_progress=False)
