"""The task interface: load a dataset, render a prompt per (item, sample)."""
from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2


class DataError(ValueError):
    """Bad or missing dataset input; the message names the file, line and expected fields."""


@dataclass
class Item:
    """One benchmark question as loaded from the dataset."""

    id: str
    fields: dict[str, Any]
    category: str | None = None


@dataclass
class Prompt:
    """What one (item, sample) sends to the engine and what grading needs to know."""

    messages: list[dict[str, Any]]
    target: str
    meta: dict[str, Any] = field(default_factory=dict)


def derive_seed(run_seed: int, item_id: str, sample: int) -> int:
    """A per-(item, sample) seed that depends only on its inputs, never on run order."""
    digest = hashlib.sha256(f"{run_seed}\x1f{item_id}\x1f{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Task(ABC):
    """A benchmark: its data format, prompt template and defaults."""

    name: str = ""
    default_samples: int = 1
    default_data_path: str = ""  # relative to the working directory, documented in docs/data.md
    default_judge: str = "rules"
    data_format: str = ""  # one line describing the expected file format, used in error messages

    @property
    def folder(self) -> Path:
        return Path(__file__).parent / self.name

    @property
    def demo_data_path(self) -> Path:
        """A small dataset written for this project, used when --data is absent and the default path is empty."""
        raise NotImplementedError

    @abstractmethod
    def load(self, path: Path) -> list[Item]:
        """Parse the dataset file; raise DataError naming the file, line and expected fields."""

    @abstractmethod
    def render(self, item: Item, sample: int, run_seed: int) -> Prompt:
        """Build the messages for one sample; deterministic in (run_seed, item id, sample)."""

    def run_options(self) -> dict[str, Any]:
        """Task-specific options recorded in run.json (e.g. HLE subset)."""
        return {}

    def summary_metrics(self, grades: list, records: list, expected_keys: list[tuple[str, int]]) -> dict[str, Any]:
        """Task-specific metrics merged into summary.json (e.g. HLE accuracy interval, calibration).

        grades: GradeRecords of this judge; records: GenerationRecords; expected_keys: every
        (item_id, sample) the run asked for, so missing ones can count as wrong.
        """
        return {}

    def template(self, name: str) -> jinja2.Template:
        """A template from the task's folder, compiled once per task instance."""
        cache = self.__dict__.setdefault("_templates", {})
        if name not in cache:
            env = jinja2.Environment(
                loader=jinja2.FileSystemLoader(str(self.folder)),
                undefined=jinja2.StrictUndefined,
                keep_trailing_newline=False,
                autoescape=False,
            )
            cache[name] = env.get_template(name)
        return cache[name]
