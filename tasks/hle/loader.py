"""Read HLE in its published shape (parquet or JSONL) into validated rows."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from tasks.base import DataError

ANSWER_TYPES = ("exactMatch", "multipleChoice")
REQUIRED = ("id", "question", "answer", "answer_type")
OPTIONAL = ("image", "category", "raw_subject", "rationale")
FORMAT = (
    "HLE as parquet or JSONL, one question per row with fields "
    "id, question, answer, answer_type (exactMatch|multipleChoice), "
    "image (a data: URI or empty), category, raw_subject, rationale"
)
SUFFIXES = (".parquet", ".jsonl")


def resolve_path(path: Path) -> Path:
    """A file as given, or in a folder the first .parquet by name, else the first .jsonl (as `generate` picks)."""
    path = Path(path)
    if path.is_dir():
        for suffix in SUFFIXES:
            found = sorted(p for p in path.glob(f"*{suffix}") if p.is_file())
            if found:
                return found[0]
        raise DataError(f"{path}: no .parquet or .jsonl file in this folder; expected {FORMAT}")
    if not path.exists():
        raise DataError(f"{path}: dataset file not found; expected {FORMAT}")
    if path.suffix not in SUFFIXES:
        raise DataError(f"{path}: unsupported file type {path.suffix!r}; expected {FORMAT}")
    return path


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Any]]:
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not valid JSON ({exc.msg}); expected {FORMAT}") from None


def _parquet_rows(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
        missing = [c for c in REQUIRED if c not in names]
        if missing:
            raise DataError(f"{path}: missing column(s) {', '.join(missing)}; expected {FORMAT}")
        # only the columns we use: the published file also carries large image previews
        table = pq.read_table(path, columns=[c for c in REQUIRED + OPTIONAL if c in names])
    except DataError:
        raise
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise DataError(f"{path}: cannot read parquet ({exc}); expected {FORMAT}") from None
    # row numbers are 1-based data rows, as a spreadsheet view of the file would show them
    for rowno, row in enumerate(table.to_pylist(), 1):
        yield f"{path} row {rowno}", row


def _text(row: dict, name: str) -> str:
    value = row.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def validate_row(row: Any, where: str) -> dict[str, str]:
    """Check one row and return its fields as strings; the error names the place and the fields."""
    if not isinstance(row, dict):
        raise DataError(f"{where}: expected an object; expected {FORMAT}")
    problems = [f"missing {name!r}" for name in REQUIRED if row.get(name) in (None, "")]
    answer_type = row.get("answer_type")
    if answer_type not in (None, "") and answer_type not in ANSWER_TYPES:
        problems.append(f"answer_type {answer_type!r} is not one of {', '.join(ANSWER_TYPES)}")
    image = row.get("image")
    if image not in (None, "") and not (isinstance(image, str) and image.startswith("data:")):
        problems.append("image must be a data: URI or empty")
    if problems:
        raise DataError(f"{where}: {'; '.join(problems)}; expected {FORMAT}")
    return {name: _text(row, name) for name in REQUIRED + OPTIONAL}


def read_rows(path: Path) -> list[dict[str, str]]:
    """All validated rows of an HLE file or folder; duplicate ids are an error."""
    path = resolve_path(path)
    rows = _parquet_rows(path) if path.suffix == ".parquet" else _jsonl_rows(path)
    out: list[dict[str, str]] = []
    seen: dict[str, str] = {}
    for where, raw in rows:
        row = validate_row(raw, where)
        if row["id"] in seen:
            raise DataError(f"{where}: duplicate id {row['id']!r} (first at {seen[row['id']]})")
        seen[row["id"]] = where
        out.append(row)
    if not out:
        raise DataError(f"{path}: no rows; expected {FORMAT}")
    return out
