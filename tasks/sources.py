"""Where a dataset comes from: a file or a folder (`save_to_disk` or a hub snapshot); `hf:` specs: hub_sources.py."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from records.provenance import file_sha256
from tasks.errors import DataError
from tasks.rows import FILE_SUFFIXES, Table, read_file, table_from_dataset

HF_PREFIX = "hf:"
_SHARD = re.compile(r"^(?P<key>.+?)(?:-\d{5}-of-\d{5})?$")


@dataclass
class SourceTable:
    """The rows read and a record of where they came from (written to run.json as `dataset_source`)."""

    table: Table
    record: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Preferences:
    """What a task tells the loader: default configs of known hub datasets, split order, expected format."""

    expected: str
    split_order: tuple[str, ...] = ()
    hub_configs: dict[str, str] = field(default_factory=dict)
    keep: Callable[[str], bool] | None = None


def local_source(data: str | Path, prefs: Preferences) -> SourceTable:
    """Read a file or a folder (`PATH#NAME` picks one split/file group in a folder); hub data: tasks.open_data."""
    text = str(data)
    path, selector = Path(text), None
    if not path.exists() and "#" in text:
        head, _, selector = text.rpartition("#")
        path = Path(head)
    if path.is_dir():
        return folder_source(path, prefs, [selector] if selector else [])
    if not path.exists():
        raise DataError(f"{path}: dataset file not found; expected {prefs.expected}")
    table = read_file(path, prefs.expected, prefs.keep)
    return SourceTable(table, {"kind": "file", "path": str(path), "files": [str(path)], "sha256": file_sha256(path)})


def files_sha256(paths: list[Path]) -> str:
    """One file: its sha256 (as before folders and hub data were accepted); several: sha256 of their sha256 lines."""
    if len(paths) == 1:
        return file_sha256(paths[0])
    lines = "".join(f"{file_sha256(p)}  {p.name}\n" for p in paths)
    return hashlib.sha256(lines.encode()).hexdigest()


# --- folders ---------------------------------------------------------------------------------------------------

def folder_source(path: Path, prefs: Preferences, selectors: list[str], record: dict | None = None) -> SourceTable:
    record = dict(record or {"kind": "folder", "path": str(path)})
    if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
        return _saved_dataset(path, prefs, selectors, record)
    groups = data_file_groups(path)
    if not groups:
        raise DataError(f"{path}: no data file ({', '.join('*' + s for s in FILE_SUFFIXES)}) in this folder or its data/; "
                        f"expected {prefs.expected}")
    names, selectors = _narrow(sorted(groups), selectors)
    key = choose(names, selectors, prefs.split_order, f"{path}", "data files")
    files = groups[key]
    tables = [read_file(f, prefs.expected, prefs.keep) for f in files]
    columns = list(dict.fromkeys(c for t in tables for c in t.columns))
    record.update(split=key, files=[str(f) for f in files], sha256=files_sha256(files))
    return SourceTable(Table([r for t in tables for r in t.rows], columns), record)


def data_file_groups(folder: Path) -> dict[str, list[Path]]:
    """Data files by split or file name, shards joined: data/test-00000-of-00002.parquet -> "test",
    gpqa_diamond.csv -> "gpqa_diamond", cfg/train-00000-of-00001.parquet -> "cfg/train"."""
    found: dict[str, dict[str, list[Path]]] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or path.suffix.lower() not in FILE_SUFFIXES or not path.is_file():
            continue
        parts = list(rel.parent.parts)
        if parts[:1] == ["data"]:  # the hub's conventional data folder adds nothing to the name
            parts = parts[1:]
        key = "/".join([*parts, _SHARD.match(path.stem).group("key")])  # type: ignore[union-attr]
        found.setdefault(key, {}).setdefault(path.suffix.lower(), []).append(path)
    # the same data in two formats (hle.parquet and hle.jsonl): read the preferred format only
    return {key: next(by_suffix[s] for s in FILE_SUFFIXES if s in by_suffix) for key, by_suffix in found.items()}


def choose(names: list[str], selectors: list[str], preferred: tuple[str, ...], where: str, what: str,
           how: str = "") -> str:
    """The named split/config, else the only one, else the task's first preferred; ambiguity lists what was found."""
    wanted = [s for s in selectors if s]
    for s in wanted:
        if hit := _pick(names, s):
            return hit
    if wanted:
        raise DataError(f"{where}: no {' or '.join(map(repr, wanted))} among the {what} found: {', '.join(names)}")
    if len(names) == 1:
        return names[0]
    for s in preferred:
        if hit := _pick(names, s):
            return hit
    raise DataError(f"{where}: several {what} found ({', '.join(names)}); name one: {how or where + '#NAME'}")


def _pick(names: list[str], selector: str) -> str | None:
    """The name itself (any case), else the only name ending in /selector ("cfg/test" for "test")."""
    s = selector.lower()
    exact = [n for n in names if n.lower() == s]
    tail = [n for n in names if n.lower().rsplit("/", 1)[-1] == s]
    return exact[0] if exact else (tail[0] if len(tail) == 1 else None)


def _narrow(names: list[str], selectors: list[str]) -> tuple[list[str], list[str]]:
    """A selector naming a folder (a config's files) keeps only the names under it and is used up."""
    for s in selectors:
        under = [n for n in names if s and n.lower().startswith(s.lower() + "/")]
        if under:
            return under, [x for x in selectors if x != s]
    return names, selectors


def _saved_dataset(path: Path, prefs: Preferences, selectors: list[str], record: dict) -> SourceTable:
    import datasets

    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as exc:  # datasets raises several types for a damaged folder
        raise DataError(f"{path}: cannot read this save_to_disk folder ({exc})") from None
    split = None
    if isinstance(loaded, datasets.DatasetDict):
        split = choose(sorted(loaded), selectors, prefs.split_order, str(path), "splits")
        loaded = loaded[split]
    record.setdefault("kind", "folder")
    record.update(format="save_to_disk", split=split)
    return dataset_table(loaded, f"{path}" + (f"#{split}" if split else ""), prefs, record)


def dataset_table(ds: Any, label: str, prefs: Preferences, record: dict) -> SourceTable:
    files = [Path(f["filename"]) for f in ds.cache_files]
    record.update(fingerprint=ds._fingerprint, files=[str(f) for f in files],
                  sha256=files_sha256(files) if files else None)
    return SourceTable(table_from_dataset(ds, label, prefs.keep), record)
