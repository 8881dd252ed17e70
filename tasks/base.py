"""The task interface: load a dataset, render a prompt per (item, sample)."""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from tasks.errors import DataError

if TYPE_CHECKING:
    from tasks.columns import Column


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


def rows_sha256(items: list[Item]) -> str:
    """sha256 of the items as read (id, fields, category): the same rows hash alike from any file or cache."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps([item.id, item.fields, item.category], sort_keys=True, ensure_ascii=False,
                                 default=str).encode("utf-8") + b"\n")
    return digest.hexdigest()


@dataclass
class LoadedDataset:
    """A task's items and where they came from: `source` goes to run.json, `notes` to stderr."""

    items: list[Item]
    source: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        return self.source["sha256"]


class Task(ABC):
    """A benchmark: its data format, prompt template and defaults."""

    name: str = ""
    default_samples: int = 1
    default_data_path: str = ""  # relative to the working directory, documented in docs/data.md
    default_judge: str = "rules"
    data_format: str = ""  # one line describing the expected file format, used in error messages
    columns: tuple["Column", ...] = ()  # the fields read and the column names they go by
    id_source: str = ""  # the field hashed into an id when a row has none
    split_order: tuple[str, ...] = ("test", "train")  # which split/file a folder or hub dataset defaults to
    hub_configs: dict[str, str] = {}  # usual hub datasets -> the config this task means (hf:NAME without :CONFIG)

    @property
    def folder(self) -> Path:
        return Path(__file__).parent / self.name

    @property
    def demo_data_path(self) -> Path:
        """A small dataset written for this project, used when --data is absent and the default path is empty."""
        raise NotImplementedError

    def load(self, data: str | Path) -> list[Item]:
        """The items of a file, folder or `hf:` spec; DataError names the file, line and expected fields."""
        return self.load_dataset(data).items

    def load_dataset(self, data: str | Path) -> LoadedDataset:
        """Read a source, map its columns, give rows without an id a stable one, refuse duplicate ids."""
        from tasks.columns import describe_mapping, is_empty, map_columns, normalise, text_id
        from tasks.hub_sources import hf_label
        from tasks.open_data import open_source
        from tasks.sources import Preferences

        aliases = {normalise(n) for c in self.columns for n in c.names}
        prefs = Preferences(self.data_format, self.split_order, self.hub_configs, keep=lambda c: normalise(c) in aliases)
        opened = open_source(data, prefs)
        rec = opened.record
        label = rec.get("path") or hf_label(rec)
        mapping = map_columns(opened.table.columns, self.columns, str(label), self.data_format)
        id_rule = f"column {mapping['id']}" if "id" in mapping else f"sha256({self.id_source})[:12]"
        items: list[Item] = []
        seen: dict[str, str] = {}
        hashed = 0
        for row in opened.table.rows:
            fields = {f: row.data.get(col) for f, col in mapping.items()}
            missing = [f if mapping[f] == f else f"{f} (column {mapping[f]!r})" for f in mapping
                       if is_empty(fields[f]) and f != "id" and next(c for c in self.columns if c.field == f).required]
            if missing:
                raise DataError(f"{row.where}: missing field(s) {', '.join(missing)}; expected {self.data_format}")
            if is_empty(fields.get("id")):
                fields["id"] = text_id(str(fields[self.id_source]))
                hashed += 1
            else:
                fields["id"] = str(fields["id"]).strip()
            if fields["id"] in seen:
                raise DataError(f"{row.where}: duplicate id {fields['id']!r} (first at {seen[fields['id']]})")
            seen[fields["id"]] = row.where
            item = self.item_from_row(fields, row.where)
            if item is not None:
                items.append(item)
        if not items:
            raise DataError(f"{label}: no items{self._empty_reason()}; expected {self.data_format}")
        notes = [f"{self.name}: {len(items)} items from {label}; columns used: {describe_mapping(mapping)}"]
        if hashed:
            notes.append(f"{self.name}: {hashed} row(s) have no id; their id is the first 12 hex digits of "
                         f"sha256({self.id_source} text), stable when rows are reordered")
        source = {**opened.record, "columns": mapping, "id_rule": id_rule, "rows_sha256": rows_sha256(items)}
        return LoadedDataset(items, source, notes)

    def _empty_reason(self) -> str:
        return ""

    @abstractmethod
    def item_from_row(self, fields: dict[str, Any], where: str) -> Item | None:
        """One item from a row's mapped fields (`id` always set); None skips it (e.g. outside a subset)."""

    def export_row(self, item: Item) -> dict[str, Any]:
        """The item in the task's default file format (for `data prepare`)."""
        raise NotImplementedError

    default_file_suffix: str = ".jsonl"  # what `data prepare` writes

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
