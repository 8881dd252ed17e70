"""Append-only JSONL files that survive a crash: flushed per record; readers skip a torn tail, the writer repairs it."""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from harness.errors import RunDirError


class JsonlWriter:
    """Appends one JSON object per line and flushes each, so a kill loses at most the line in flight."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._f = open(path, "a", encoding="utf-8")

    def write(self, obj: dict[str, Any]) -> None:
        self._f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self._f.flush()

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def repair_torn_tail(path: Path) -> bool:
    """Cut a last line that was left half-written by a crash; return whether anything was cut.

    For the file's one writer only (under its run lock); readers use read_jsonl_tolerant.
    """
    if not path.exists() or path.stat().st_size == 0:
        return False
    with open(path, "rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 1))
        if f.read(1) == b"\n":
            return False
        # find the start of the unterminated last line
        pos = size
        chunk = 1 << 16
        while pos > 0:
            start = max(0, pos - chunk)
            f.seek(start)
            data = f.read(pos - start)
            nl = data.rfind(b"\n")
            if nl >= 0:
                cut = start + nl + 1
                break
            pos = start
        else:
            cut = 0
        tail = _read_at(f, cut, size)
        try:
            json.loads(tail)
            f.seek(0, os.SEEK_END)
            f.write(b"\n")  # a complete record that only lacked its newline
            return True
        except ValueError:
            f.truncate(cut)
            return True


def _read_at(f, start: int, end: int) -> bytes:
    f.seek(start)
    return f.read(end - start)


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object); a corrupt line in the middle is an error naming file and line."""
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            obj = _parse_line(path, lineno, line)
            if obj is not None:
                yield lineno, obj


def read_jsonl_tolerant(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], int | None]:
    """(line number, object) pairs, and the number of an unfinished last line (skipped) or None.

    Only reads: a last line cut short by a crash, or still being written by a live `generate`, is left
    where it is for the writer to repair. A complete last record that lacks only its newline is kept.
    """
    out: list[tuple[int, dict[str, Any]]] = []
    torn: int | None = None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for lineno, line in enumerate(f, 1):
            if not line.endswith("\n"):  # only the last line can lack its newline
                try:
                    obj = json.loads(line) if line.strip() else None
                except ValueError:
                    torn = lineno
                    break
                if isinstance(obj, dict):
                    out.append((lineno, obj))
                elif obj is not None:
                    torn = lineno
                break
            obj = _parse_line(path, lineno, line)
            if obj is not None:
                out.append((lineno, obj))
    return out, torn


def _parse_line(path: Path, lineno: int, line: str) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{path}:{lineno}: corrupt record ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise RunDirError(f"{path}:{lineno}: expected a JSON object")
    return obj


def write_jsonl_atomic(path: Path, objs: Iterable[dict[str, Any]]) -> None:
    """Replace a file in one step so a reader never sees it half-written."""
    with _atomic_text(path) as f:
        for obj in objs:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")


def write_json_atomic(path: Path, obj: Any) -> None:
    with _atomic_text(path) as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


@contextmanager
def _atomic_text(path: Path) -> Iterator[TextIO]:
    """A temp file of its own beside `path` (two writers never share one), renamed over `path` when done."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _FILE_MODE)  # mkstemp makes 0600; records are as readable as any other file
        with open(fd, "w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # read once at import, before any threads exist
