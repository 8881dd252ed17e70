"""Column mapping: find each field a task needs among the columns a dataset happens to use."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterable

from tasks.errors import DataError

ID_HASH_CHARS = 12


@dataclass(frozen=True)
class Column:
    """One field a task reads, the column names it goes by in the wild, and whether it must be there."""

    field: str
    names: tuple[str, ...]
    required: bool = True


def normalise(name: str) -> str:
    """Case and punctuation do not matter: "High-level domain" and "high_level_domain" are one column."""
    return re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")


def map_columns(columns: Iterable[str], wanted: tuple[Column, ...], where: str, expected: str) -> dict[str, str]:
    """field -> the dataset's column for it; the first listed alias present wins."""
    by_norm: dict[str, str] = {}
    for col in columns:
        by_norm.setdefault(normalise(col), col)
    mapping: dict[str, str] = {}
    missing = []
    for column in wanted:
        found = next((by_norm[normalise(n)] for n in column.names if normalise(n) in by_norm), None)
        if found is not None:
            mapping[column.field] = found
        elif column.required:
            others = [n for n in column.names[1:]]
            missing.append(column.names[0] + (f" (or {', '.join(others)})" if others else ""))
    if missing:
        raise DataError(f"{where}: missing column(s) {', '.join(missing)}; columns found: "
                        f"{', '.join(map(str, columns)) or 'none'}; expected {expected}")
    return mapping


def describe_mapping(mapping: dict[str, str]) -> str:
    """e.g. "problem<-Problem, answer<-Answer": what a user reads to check the mapping."""
    return ", ".join(f"{field}<-{col}" if field != col else field for field, col in mapping.items())


def text_id(text: str) -> str:
    """The stable id of a row without one: the first hex digits of sha256 of its question text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_HASH_CHARS]


def is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value != value  # NaN from pandas
