"""Typed, versioned records written to a run directory.

A neutral package: the harness writes and reads these records and the judges read them, so neither
package imports the other for them.
"""
from __future__ import annotations

import types
import typing
from dataclasses import MISSING, dataclass, field, fields
from functools import lru_cache
from typing import Any

SCHEMA_VERSION = 1

# 'ambiguous': the response commits to an answer that contradicts itself (e.g. a GPQA letter quoted with
# another option's text); like no_answer it is never correct.
GRADE_STATUSES = ("graded", "no_answer", "ambiguous", "truncated", "generation_error", "judge_error")
FINISH_REASONS = ("stop", "length", "error")


class RecordError(ValueError):
    """A record that does not match its schema."""


def _from_dict(cls, data: Any, where: str):
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected a JSON object, got {type(data).__name__}")
    check_schema_version(data, where)
    required = _required(cls)
    if not required <= data.keys():
        raise RecordError(f"{where}: missing field(s) {', '.join(sorted(required - data.keys()))}")
    checks = _type_checks(cls)
    kwargs = {}
    for name, value in data.items():
        check = checks.get(name)
        if check is None:
            continue  # a field this code does not know (written by a newer minor version): dropped
        allowed, description = check
        # JSON gives exact types, so most values pass at once; a subclass takes isinstance. JSON true is not the
        # integer 1: no field admits a bool unless its annotation says bool.
        if type(value) not in allowed and (not isinstance(value, allowed) or isinstance(value, bool)
                                           and bool not in allowed):
            raise RecordError(f"{where}: field {name!r} must be {description}, got {_shown(value)}")
        kwargs[name] = value
    return cls(**kwargs)


def check_schema_version(data: dict[str, Any], where: str) -> None:
    """A record written by newer code may mean something this code cannot read: refuse it, never guess."""
    version = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise RecordError(f"{where}: schema_version {version} is newer than this code reads (up to {SCHEMA_VERSION}); "
                          "upgrade the harness to read it")


def _shown(value: Any) -> str:
    text = repr(value)
    return (text if len(text) <= 60 else text[:57] + "...") + f" ({'null' if value is None else type(value).__name__})"


@lru_cache(maxsize=None)
def _required(cls) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING)


_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object",
          list: "a list", type(None): "null"}


def _accepts(hint: Any) -> tuple[tuple[type, ...], str]:
    """The Python types a field annotation admits in JSON (float admits int; int never admits bool)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [_accepts(h) for h in typing.get_args(hint)]
        return tuple(t for m in members for t in m[0]), " or ".join(m[1] for m in members)
    base = typing.get_origin(hint) or hint
    if base is float:
        return (int, float), _NAMES[float]
    return (base,), _NAMES.get(base, base.__name__)


@lru_cache(maxsize=None)
def _type_checks(cls) -> dict[str, tuple[tuple[type, ...], str]]:
    """Per field: the types its annotation admits, and how an error names them."""
    hints = typing.get_type_hints(cls)
    return {f.name: _accepts(hints[f.name]) for f in fields(cls)}


def _shallow_dict(record: Any) -> dict[str, Any]:
    # dataclasses.asdict deep-copies every nested value; records only need their top level for JSON
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


@dataclass
class GenerationRecord:
    """One (item, sample) generation: enough on its own to be graded."""

    task: str
    item_id: str
    sample: int
    messages: list[dict[str, Any]]
    target: str
    response: str
    finish_reason: str  # one of FINISH_REASONS; the grade stage counts any other value as a generation error
    usage: dict[str, int]
    latency_s: float
    engine: dict[str, Any]
    seed: int | None
    error: str | None = None
    category: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # task detail, e.g. GPQA permutation and gold letter
    attempts: int = 1
    schema_version: int = SCHEMA_VERSION
    # A reasoning model's thinking, apart from `response` (what judges read); None when there was none.
    # Records written before this field existed have none and grade as before.
    reasoning: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.item_id, self.sample)

    @property
    def finished(self) -> bool:
        return self.finish_reason in ("stop", "length")

    def to_dict(self) -> dict[str, Any]:
        return _shallow_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "record") -> "GenerationRecord":
        record = _from_dict(cls, data, where)
        for name in ("prompt_tokens", "completion_tokens"):  # summed into summary.json
            value = record.usage.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise RecordError(f"{where}: field 'usage.{name}' must be an integer, got {_shown(value)}")
        return record


@dataclass
class GradeRecord:
    """One judge verdict for one generation record."""

    item_id: str
    sample: int
    correct: bool | None
    extracted: str | None
    status: str  # one of GRADE_STATUSES
    judge: str
    category: str | None = None
    target: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @property
    def key(self) -> tuple[str, int]:
        return (self.item_id, self.sample)

    def to_dict(self) -> dict[str, Any]:
        return _shallow_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "record") -> "GradeRecord":
        return _from_dict(cls, data, where)
