"""Append-only JSONL files that survive a crash: flushed per record; readers skip a torn tail, the writer repairs it."""
from __future__ import annotations

import glob
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from harness.errors import RunDirError
from harness.locks import pid_alive


class JsonlWriter:
    """Appends one JSON object per line straight to the file, so a kill loses at most the line in flight.

    After a failed write (disk full) nothing more is appended: a later line after a half-written one would
    leave a corrupt record in the middle, where a torn last line is repaired by the next writer.
    """

    def __init__(self, path: Path):
        self.path = path
        self.written = 0
        self._failed = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, _FILE_MODE)
        except OSError as exc:
            raise write_error(path, exc, "cannot open for appending") from None

    def write(self, obj: dict[str, Any]) -> None:
        if self._failed or self._fd is None:
            raise RunDirError(f"{self.path}: not appending after an earlier failed write")
        data = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            while data:
                data = data[os.write(self._fd, data):]
        except OSError as exc:
            self._failed = True
            raise write_error(self.path, exc, f"cannot append a record ({self.written} appended before it are kept; "
                              "a rerun resumes from them)") from None
        self.written += 1

    def close(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.fsync(fd)
        except OSError as exc:
            if not self._failed:  # the write that failed has already said so
                raise write_error(self.path, exc, "cannot finish writing") from None
        finally:
            os.close(fd)

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_error(path: Path, exc: OSError, what: str) -> RunDirError:
    """One line naming the file and the reason (disk full, file too large, permissions), for the CLI to print."""
    return RunDirError(f"{path}: {what}: {exc.strerror or exc}")


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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the writer's pid in the name lets a later run tell an orphan (dead writer) from a live write
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    except OSError as exc:
        raise write_error(path, exc, "cannot write") from None
    try:
        os.fchmod(fd, _FILE_MODE)  # mkstemp makes 0600; records are as readable as any other file
        with open(fd, "w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise write_error(path, exc, "cannot write (the previous version, if any, is unchanged)") from None
        raise


def remove_orphan_temps(folder: Path, names: Iterable[str]) -> list[Path]:
    """Delete temp files of atomic writes to `names` in `folder` left by writers that died; return them.

    For a caller that holds the lock over those files: a temp file naming a live pid is never touched;
    one without a pid (written before pids were recorded) can only be an orphan under that lock.
    """
    removed = []
    for name in names:
        for tmp in folder.glob(f".{glob.escape(name)}.*.tmp"):
            middle = tmp.name[len(name) + 2:-len(".tmp")]
            pid, _, rest = middle.partition(".")
            if rest and pid.isdigit() and (int(pid) == os.getpid() or pid_alive(int(pid))):
                continue
            try:
                tmp.unlink()
                removed.append(tmp)
            except OSError:
                pass  # gone already, or not ours to delete
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # read once at import, before any threads exist
