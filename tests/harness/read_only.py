"""Run the harness in a subprocess that cannot write a folder, even as root (tests run as root in CI).

As root, permission bits do not stop writes, so the folder is bind-mounted read-only in a private
mount namespace (`unshare -m`): writes fail with EROFS as on a read-only share. As another user,
removing the write bits is enough. Where neither is possible, callers skip.
"""
from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'


def _as_root_in_read_only_mount(folder: Path, cmd: list[str]) -> list[str]:
    return ["unshare", "-m", "sh", "-c", _READ_ONLY_MOUNT, "sh", str(folder), *cmd]


@functools.lru_cache(maxsize=1)
def read_only_mount_works() -> bool:
    """Whether this machine lets us make a folder read-only for a child process as root (probed once)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"read-only-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        proc = subprocess.run(_as_root_in_read_only_mount(probe, ["sh", "-c", f'! touch "{probe}/x"']),
                              capture_output=True, timeout=30)
        return proc.returncode == 0 and not (probe / "x").exists()
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def can_make_read_only() -> bool:
    return os.geteuid() != 0 or read_only_mount_works()


def run_harness_read_only(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m harness ARGS` with `folder` (and all below it) unwritable for that process."""
    cmd = [sys.executable, "-m", "harness", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if os.geteuid() == 0:
        return subprocess.run(_as_root_in_read_only_mount(folder, cmd), cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=300)
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
    try:
        for p, mode in modes.items():
            p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
