"""Checks on the folder an `--out` names: a new or empty folder, the run itself, never another run's files."""
from __future__ import annotations

from pathlib import Path

from harness.errors import RunDirError
from harness.jsonl import write_json_atomic
from harness.locks import LOCK_NAME
from harness.rundir import GENERATIONS, GRADES_OF, RUN_JSON, read_grades_of


def check_out_dir(path: Path, force: bool) -> None:
    """Refuse an --out that is a file, or a folder with other files and no run.json (unless force)."""
    if path.exists() and not path.is_dir():
        raise RunDirError(f"--out {path}: is a file; --out names a run directory (a new one, or a run to resume)")
    if not path.is_dir() or (path / RUN_JSON).exists():
        return
    try:
        others = sorted(p.name for p in path.iterdir() if p.name != LOCK_NAME)
    except OSError as exc:
        raise RunDirError(f"--out {path}: cannot read this folder ({exc.strerror or exc})") from None
    if others and not force:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise RunDirError(f"--out {path}: this folder holds other files ({shown}) and is not a run (no {RUN_JSON}); "
                          "use a new or empty folder, or --force to write the run beside them")


def check_grades_out(grades_out: Path | str, run_path: Path | str) -> None:
    """Refuse `grade RUN --out DIR` where DIR is another run, or holds the grades of another run."""
    out, run = Path(grades_out), Path(run_path).resolve()
    if out.resolve() == run:
        return
    held = [name for name in (RUN_JSON, GENERATIONS) if (out / name).exists()]
    if held:
        raise RunDirError(f"--out {out}: is a run of its own ({', '.join(held)}); grading {run_path} there would replace "
                          "that run's grades; use a new or empty folder")
    pointer = out / GRADES_OF
    if pointer.is_file() and (linked := read_grades_of(pointer)) != str(run):
        raise RunDirError(f"--out {out}: holds grades of the run {linked}, not of {run}; use another folder")


def link_grades_dir(grades_out: Path | str, run_path: Path | str) -> None:
    """Record in `grades_out` the run its grades belong to, so summary, compare and report open it like the run."""
    check_grades_out(grades_out, run_path)  # again, under the judge's lock: another grade may have linked it since
    pointer = Path(grades_out) / GRADES_OF
    if not pointer.exists():
        write_json_atomic(pointer, {"run": str(Path(run_path).resolve())})
