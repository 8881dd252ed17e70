"""Build real run directories with the real generate stage, answered by a scripted in-process engine."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable

from engine.base import ChatRequest, Completion, Engine, SamplingParams
from harness.generate import GenerateConfig, run_generation
from tasks import get_task


class AnswerEngine(Engine):
    """Answers each request with answer(request); no network, so runs are built in milliseconds."""

    name = "scripted"

    def __init__(self, answer: Callable[[ChatRequest], str], supports_images: bool = True) -> None:
        self.answer = answer
        self.supports_images = supports_images

    async def chat(self, request: ChatRequest) -> Completion:
        return Completion(text=self.answer(request), finish_reason="stop", prompt_tokens=10, completion_tokens=5)


def make_run(out: Path, task_name: str, answer: Callable[[ChatRequest], str], samples: int = 1,
             supports_images: bool = True, data: Path | None = None, **task_options) -> Path:
    task = get_task(task_name, **task_options)
    data = data or task.demo_data_path
    items = task.load(data)
    cfg = GenerateConfig(task=task, data_path=data, out=out, samples=samples, limit=None,
                         sampling=SamplingParams(max_tokens=64), progress=False)
    asyncio.run(run_generation(cfg, AnswerEngine(answer, supports_images), items, "scripted-model"))
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
