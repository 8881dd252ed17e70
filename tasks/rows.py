"""Read data files (JSONL, JSON, CSV, parquet) and `datasets` tables into rows that know where they came from."""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tasks.errors import DataError

FILE_SUFFIXES = (".parquet", ".jsonl", ".csv", ".json")  # also the order of preference within one folder group


@dataclass
class Row:
    """One record and its place (`file:line` or `file row N`) for error messages."""

    where: str
    data: dict[str, Any]


@dataclass
class Table:
    """Rows plus the columns they have (a file's header, a dataset's features)."""

    rows: list[Row]
    columns: list[str]


def read_file(path: Path, expected: str, keep: Callable[[str], bool] | None = None) -> Table:
    """Rows of one data file, chosen by its suffix; the error names the file and line.

    keep: which columns are worth reading where the format allows skipping (parquet image previews).
    """
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _parquet(path, expected, keep)
    readers = {".jsonl": _jsonl, ".json": _json, ".csv": _csv}
    if suffix not in readers:
        raise DataError(f"{path}: unsupported file type {path.suffix!r} (use {', '.join(FILE_SUFFIXES)}); expected {expected}")
    return readers[suffix](path, expected)


def _objects(pairs: list[tuple[str, Any]], expected: str) -> Table:
    columns: dict[str, None] = {}
    rows = []
    for where, obj in pairs:
        if not isinstance(obj, dict):
            raise DataError(f"{where}: expected a JSON object; expected {expected}")
        columns.update(dict.fromkeys(obj))
        rows.append(Row(where, obj))
    return Table(rows, list(columns))


def _jsonl(path: Path, expected: str) -> Table:
    pairs = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                pairs.append((f"{path}:{lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg}); expected {expected}") from None
    return _objects(pairs, expected)


def _json(path: Path, expected: str) -> Table:
    """A JSON array of objects (or an object holding one under "data"/"rows"), as some exports write."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); expected {expected}") from None
    if isinstance(data, dict):
        data = next((data[k] for k in ("data", "rows", "examples") if isinstance(data.get(k), list)), None)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of objects; expected {expected}")
    return _objects([(f"{path} item {i}", obj) for i, obj in enumerate(data, 1)], expected)


def _csv(path: Path, expected: str) -> Table:
    # the csv module (not pandas) so that errors can name the physical line of multi-line quoted rows
    rows = []
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        for row in reader:
            where = f"{path}:{reader.line_num}"  # the line where this row ended
            if None in row or any(v is None for v in row.values()):
                raise DataError(f"{where}: row has {len(header)} columns expected, got a different number")
            rows.append(Row(where, row))
    return Table(rows, header)


def _parquet(path: Path, expected: str, keep: Callable[[str], bool] | None) -> Table:
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
        table = pq.read_table(path, columns=[n for n in names if keep is None or keep(n)])
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise DataError(f"{path}: cannot read parquet ({exc}); expected {expected}") from None
    # 1-based data rows, as a spreadsheet view of the file would number them
    return Table([Row(f"{path} row {i}", r) for i, r in enumerate(table.to_pylist(), 1)], table.column_names)


def table_from_dataset(ds: Any, label: str, keep: Callable[[str], bool] | None = None) -> Table:
    """Rows of a `datasets.Dataset`; images stay undecoded ({bytes, path}) so nothing is re-encoded."""
    from datasets import Image

    if keep is not None:
        ds = ds.select_columns([c for c in ds.column_names if keep(c)])
    for name, feature in ds.features.items():
        if isinstance(feature, Image) and feature.decode:
            ds = ds.cast_column(name, Image(decode=False))
    return Table([Row(f"{label} row {i}", r) for i, r in enumerate(ds.to_list(), 1)], list(ds.column_names))
