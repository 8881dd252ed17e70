"""The report's output folder: a manifest of what `report` wrote, so a rebuild replaces only those files."""
from __future__ import annotations

import json
import re
from pathlib import Path

from harness.errors import RunDirError
from harness.jsonl import write_json_atomic

MANIFEST = ".harness-report.json"
# a report written before the manifest existed: these files, and sample pages named like ours under data/
LEGACY_FILES = ("index.html", "report.js", "report.css")
LEGACY_PAGE = re.compile(r"^[A-Za-z0-9_.-]+-(?:p\d{4}|index)\.js$")


def files_written_before(out: Path, force: bool) -> list[Path]:
    """What an earlier `report` wrote into `out` (to replace); refuses a non-empty folder that is not a report.

    --force writes into such a folder anyway, beside its files, and still deletes none of them.
    """
    if not out.exists():
        return []
    if not out.is_dir():
        raise RunDirError(f"-o {out}: is a file; -o names the report's folder")
    manifest = out / MANIFEST
    if manifest.is_file():
        return _read_manifest(manifest)
    if all((out / name).is_file() for name in LEGACY_FILES):
        data = out / "data"
        pages = sorted(p for p in data.iterdir() if p.is_file() and LEGACY_PAGE.match(p.name)) if data.is_dir() else []
        return [out / name for name in LEGACY_FILES] + pages
    others = sorted(p.name for p in out.iterdir())
    if others and not force:
        shown = ", ".join(others[:4]) + (", ..." if len(others) > 4 else "")
        raise RunDirError(f"-o {out}: this folder holds other files ({shown}) and is not a report (no {MANIFEST}); "
                          "use a new or empty folder, or --force to write the report beside them (none is deleted)")
    return []


def _read_manifest(manifest: Path) -> list[Path]:
    try:
        files = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        if not all(isinstance(f, str) for f in files):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError):
        raise RunDirError(f'{manifest}: unreadable; it should hold {{"files": [...]}}, the files a report wrote here. '
                          "Delete it only if that folder holds nothing else of yours") from None
    root = manifest.parent.resolve()
    out = []
    for name in files:
        path = (manifest.parent / name)
        if root not in path.resolve().parents:  # a hand-edited manifest may not reach outside the folder
            raise RunDirError(f"{manifest}: names {name!r}, which is outside {manifest.parent}")
        out.append(path)
    return out


def remove_previous(out: Path, previous: list[Path]) -> None:
    """Delete the files an earlier build wrote (pages of old runs must not linger), then their emptied folders."""
    for path in previous:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    for folder in sorted({p.parent for p in previous}, key=lambda p: -len(p.parts)):
        if folder != out and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def write_manifest(out: Path, written: list[Path]) -> None:
    """Record every file this build wrote, relative to `out`."""
    names = sorted(str(p.relative_to(out)) for p in written)
    write_json_atomic(out / MANIFEST, {"written_by": "python -m harness report", "files": names})
