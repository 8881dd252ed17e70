"""Benchmarks: a registry of task classes, imported lazily."""
from __future__ import annotations

import importlib

from records.provenance import file_sha256
from tasks.base import Item, LoadedDataset, Prompt, Task, derive_seed
from tasks.errors import DataError

TASKS: dict[str, str] = {
    "aime": "tasks.aime:AimeTask",
    "gpqa": "tasks.gpqa:GpqaTask",
    "hle": "tasks.hle:HleTask",
}


def get_task(name: str, **options) -> Task:
    """Instantiate a task by name; unknown names list the valid ones."""
    if name not in TASKS:
        raise DataError(f"unknown task {name!r}; valid tasks: {', '.join(sorted(TASKS))}")
    module_name, _, class_name = TASKS[name].partition(":")
    return getattr(importlib.import_module(module_name), class_name)(**options)


__all__ = ["DataError", "Item", "LoadedDataset", "Prompt", "Task", "TASKS", "derive_seed", "file_sha256", "get_task"]
