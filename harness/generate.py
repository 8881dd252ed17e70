"""The generate stage: render prompts, run them through an engine, append one record per sample."""
from __future__ import annotations

import asyncio
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

from engine import ChatRequest, Completion, Engine, SamplingParams
from engine.reasoning import split_completion
from harness.errors import RunDirError
from harness.jsonl import JsonlWriter, remove_orphan_temps, repair_torn_tail
from harness.locks import RunLock, describe_takeover
from harness.progress import Progress
from harness.out_folders import check_out_dir
from harness.rundir import GENERATIONS, RUN_FILES, RUN_JSON, RunDir, RunSpec
from records import GenerationRecord
from records.provenance import provenance
from tasks import DataError, Item, Task, derive_seed, file_sha256


@dataclass
class GenerateConfig:
    task: Task
    data_path: Path | str  # a file or folder path, or an hf: spec
    out: Path
    samples: int
    limit: int | None
    sampling: SamplingParams
    seed: int = 0
    concurrency: int = 32
    force: bool = False
    progress: bool = True
    dataset_source: dict[str, Any] | None = None  # from Task.load_dataset; else data_path is one file, hashed here
    reasoning_parser: str = "auto"  # engine.reasoning.PARSERS: how thinking is split from the response
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)  # --chat-template-kwargs, for run.json


@dataclass
class GenerateResult:
    run_dir: Path
    expected: int
    kept: int
    generated: int
    errors: int
    error_examples: list[str] = field(default_factory=list)


def resolve_data_path(task: Task, data: str | None) -> tuple[Path | str, bool]:
    """The dataset to use (a path or an `hf:` spec) and whether it is the built-in demo set."""
    if data:
        if Path(data).exists():
            return Path(data), False
        if data.startswith("hf:") or "#" in data:  # a hub spec, or a folder's PATH#SPLIT: the loader checks it
            return data, False
        raise DataError(f"{data}: dataset file not found; expected {task.data_format}")
    default = Path(task.default_data_path)
    if default.exists():
        return default, False
    return task.demo_data_path, True


def load_task_data(task: Task, data: str | None):
    """The task's dataset from --data, else its documented path, else its demo set; notes go to stderr."""
    path, is_demo = resolve_data_path(task, data)
    if is_demo:
        print(f"note: {task.default_data_path} not found; using the built-in demo set {path}", file=sys.stderr)
    dataset = task.load_dataset(path)
    for note in dataset.notes:
        print(f"note: {note}", file=sys.stderr)
    return path, dataset


def build_spec(cfg: GenerateConfig, engine: Engine, items: list[Item], model: str | None) -> RunSpec:
    return RunSpec(
        task=cfg.task.name,
        dataset_path=str(cfg.data_path),
        dataset_sha256=cfg.dataset_source["sha256"] if cfg.dataset_source else file_sha256(Path(cfg.data_path)),
        item_ids=[it.id for it in items],
        samples=cfg.samples,
        engine_name=engine.name,
        model=model,
        engine={"chat_template_kwargs": cfg.chat_template_kwargs, **engine.describe(),
                "reasoning_parser": cfg.reasoning_parser},
        sampling=cfg.sampling.to_dict(),
        seed=cfg.seed,
        task_options=cfg.task.run_options(),
        provenance=provenance(),
        dataset_source=cfg.dataset_source or {},
    )


@contextmanager
def claim_run_dir(out: Path, force: bool) -> Iterator[RunLock]:
    """Check --out, create it, and hold its generate lock; a folder created here and left empty is removed."""
    check_out_dir(out, force)
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"--out {out}: cannot create this folder ({exc.strerror or exc})") from None
    try:
        with RunDir(out).generate_lock() as lock:
            note = describe_takeover(lock)
            if note:
                print(note, file=sys.stderr)
            yield lock
    finally:
        if created:
            try:
                out.rmdir()  # only succeeds when nothing was written (e.g. the server was down)
            except OSError:
                pass


def prepare_run_dir(cfg: GenerateConfig, spec: RunSpec) -> list[GenerationRecord]:
    """Create or reopen the run directory (its lock held); return the finished records to keep."""
    run = RunDir(cfg.out)
    if run.exists():
        old = run.read_spec()
        diffs = old.differences(spec)
        if diffs and not cfg.force:
            raise RunDirError(
                f"{cfg.out} holds a different run; refusing to mix results:\n  - " + "\n  - ".join(diffs)
                + "\nuse another --out, or --force to move the old results aside and start a new run"
            )
        if diffs:
            backup = cfg.out / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}"
            backup.mkdir()
            for name in RUN_FILES:
                if (cfg.out / name).exists():
                    shutil.move(str(cfg.out / name), str(backup / name))
            print(f"moved the previous run's files to {backup}", file=sys.stderr)
    cfg.out.mkdir(parents=True, exist_ok=True)
    for tmp in remove_orphan_temps(cfg.out, (RUN_JSON, GENERATIONS)):
        print(f"note: removed {tmp}, left by a generate that was killed while writing", file=sys.stderr)
    expected = set(spec.expected_keys())
    repair_torn_tail(run.generations_path)  # the writer, under the lock, repairs what a crash left
    existing = run.read_generations()
    keep = [r for r in existing if r.finished and r.key in expected]
    # rewrite so the file holds one finished record per pair before retries append
    if _line_count(run.generations_path) != len(keep):
        run.compact_generations(keep)
    run.write_spec(spec)
    return keep


def _line_count(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def make_record(task: Task, item: Item, sample: int, completion: Completion, prompt, params: SamplingParams,
                engine_desc: dict[str, Any], reasoning_parser: str = "none") -> GenerationRecord:
    split = split_completion(completion, reasoning_parser)
    return GenerationRecord(
        task=task.name,
        item_id=item.id,
        sample=sample,
        messages=prompt.messages,
        target=prompt.target,
        response=split.response if completion.finish_reason != "error" else "",
        reasoning=split.reasoning if completion.finish_reason != "error" else None,
        finish_reason=completion.finish_reason,
        usage={"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens},
        latency_s=round(completion.latency_s, 6),
        engine=engine_desc,
        seed=params.seed,
        error=completion.error,
        category=item.category,
        meta=prompt.meta,
        attempts=completion.attempts,
    )


async def run_generation(cfg: GenerateConfig, engine: Engine, items: list[Item], model: str | None,
                         lock: RunLock | None = None) -> GenerateResult:
    """Generate every missing (item, sample) of the run; safe to interrupt and rerun.

    `lock`: the run's generate lock when the caller already holds it (claim_run_dir); else taken here.
    """
    if lock is None:
        with claim_run_dir(cfg.out, cfg.force) as held:
            return await run_generation(cfg, engine, items, model, held)
    await engine.check_ready()  # before anything is written: a dead server leaves no run behind
    spec = build_spec(cfg, engine, items, model)
    keep = prepare_run_dir(cfg, spec)
    done = {r.key for r in keep}
    pending = [(it, s) for it in items for s in range(cfg.samples) if (it.id, s) not in done]
    engine_desc = spec.engine
    result = GenerateResult(run_dir=cfg.out, expected=len(spec.expected_keys()), kept=len(done), generated=0, errors=0)
    progress = Progress(total=result.expected, initial=len(done), desc=f"generate {cfg.task.name}", enabled=cfg.progress)

    async def one(item: Item, sample: int, writer: JsonlWriter) -> None:
        prompt = cfg.task.render(item, sample, cfg.seed)
        params = _with_seed(cfg.sampling, derive_seed(cfg.seed, item.id, sample))
        request = ChatRequest(request_id=f"{item.id}#{sample}", messages=prompt.messages, params=params)
        if request.has_images and not engine.supports_images:
            completion = Completion.failed(f"engine {engine.name!r} does not accept images; this item has an image")
        else:
            completion = await engine.chat(request)
        record = make_record(cfg.task, item, sample, completion, prompt, params, engine_desc, cfg.reasoning_parser)
        writer.write(record.to_dict())  # one writer on one event loop: lines never interleave
        if completion.finish_reason == "error":
            result.errors += 1
            if len(result.error_examples) < 3:
                result.error_examples.append(f"{request.request_id}: {completion.error}")
        else:
            result.generated += 1
        progress.update(1, errors=result.errors)

    with JsonlWriter(RunDir(cfg.out).generations_path) as writer:
        try:
            # `concurrency` workers share one iterator: with a semaphore over thousands of waiting tasks,
            # asyncio scans its waiters on every release (~7% of the client's CPU at 2,048 pending).
            todo = iter(pending)

            async def worker() -> None:
                for it, s in todo:
                    await one(it, s, writer)

            await asyncio.gather(*(worker() for _ in range(min(max(1, cfg.concurrency), len(pending)))))
        finally:
            progress.close()
    return result


def _with_seed(params: SamplingParams, seed: int) -> SamplingParams:
    if params.seed is not None:
        return params
    return replace(params, seed=seed)  # not via to_dict(): asdict deep-copies every field


def limit_items(items: list[Item], limit: int | None) -> list[Item]:
    if limit is not None:
        if limit < 1:
            raise DataError(f"--limit must be >= 1, got {limit}")
        items = items[:limit]
    return items


def describe_result(result: GenerateResult) -> str:
    lines = [f"{result.run_dir}: {result.kept + result.generated}/{result.expected} samples finished "
             f"({result.generated} new, {result.kept} kept from before)"]
    if result.errors:
        lines.append(f"{result.errors} request(s) failed after retries and were recorded as errors; rerun the same "
                     "command to retry only those")
        lines += [f"  e.g. {e}" for e in result.error_examples]
    return "\n".join(lines)
