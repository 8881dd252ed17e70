"""Exclusive locks on run directories: one `generate` per run, one `grade` per (run, judge).

A lock is a file holding who took it (pid, host, start time). Exclusion comes from
`fcntl.flock` on that file, which the kernel drops when the holder exits, however it exits; the text
is there for the message a refused process prints and to judge a lock that outlived its process:

- flock granted and the file names this host: the holder died (the kernel would not grant it
  otherwise), so the lock is taken over and a note says so.
- flock granted and the file names another host: on NFS with working locks the holder is gone, but on
  a mount without lock support (`nolock`, `local_lock=all`) flock only excludes processes of one host,
  so this host cannot tell; the lock is refused with the file to delete once that process is known dead.
- a filesystem without flock (ENOLCK, EOPNOTSUPP): the text alone decides; a live pid on this host
  refuses, a dead one is taken over. Two processes starting in the same instant can both win there.

A released lock's file is removed while still locked, and a taker checks that the file it locked is
still the one at the path, so a process that opened the old file never holds a lock nobody else sees.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.errors import RunDirError

LOCK_NAME = ".lock"
_NO_FLOCK = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)


@dataclass
class Holder:
    """Who holds (or last held) a lock, as written in its file."""

    pid: int
    host: str
    started_at: str

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host} (started {self.started_at})"

    @classmethod
    def me(cls) -> "Holder":
        return cls(pid=os.getpid(), host=socket.gethostname(),
                   started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


class LockHeld(RunDirError):
    """Another live process holds the lock."""

    def __init__(self, message: str, holder: Holder | None):
        super().__init__(message)
        self.holder = holder


class CannotWrite(RunDirError):
    """The lock's folder cannot be written (read-only filesystem, permissions)."""


def read_holder(path: Path) -> Holder | None:
    """The holder written in a lock file, or None when the file is absent, empty or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Holder(pid=int(data["pid"]), host=str(data["host"]), started_at=str(data["started_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


class RunLock:
    """An exclusive lock held through a file at `path`; `what` names the job in messages."""

    def __init__(self, path: Path | str, what: str):
        self.path = Path(path)
        self.what = what
        self.took_over: Holder | None = None  # the dead holder whose lock was taken over, if any
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        """Take the lock or raise LockHeld (another holder) / RunDirError (cannot write there)."""
        for _ in range(20):  # retried only when the file was replaced between open and lock
            fd = self._open()
            try:
                locked = self._try_flock(fd)
                if locked and not self._still_at_path(fd):
                    os.close(fd)
                    continue
                previous = read_holder(self.path)
                self._check_previous(previous, kernel_locked=locked)
                self._write_me(fd)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            self.took_over = previous
            return self
        raise RunDirError(f"{self.path}: could not take the lock (the file kept changing)")

    def release(self) -> None:
        """Remove the file while still holding it, then unlock; safe to call twice."""
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self._fd)  # closing drops the flock
        self._fd = None

    def __enter__(self) -> "RunLock":
        return self if self._fd is not None else self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    # -- steps -------------------------------------------------------------------------------------
    def _open(self) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise CannotWrite(f"cannot write to {self.path.parent}: {exc.strerror or exc}") from None

    def _try_flock(self, fd: int) -> bool | None:
        """True: locked; None: this filesystem has no flock. Raises LockHeld when another holds it."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            raise self._held(self._wait_for_holder()) from None
        except OSError as exc:
            if exc.errno in _NO_FLOCK:
                return None
            raise RunDirError(f"cannot lock {self.path}: {exc.strerror or exc}") from None

    def _still_at_path(self, fd: int) -> bool:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)

    def _wait_for_holder(self) -> Holder | None:
        """The holder may have the flock but not yet its text: give it a moment."""
        for _ in range(20):
            holder = read_holder(self.path)
            if holder is not None:
                return holder
            time.sleep(0.05)
        return None

    def _check_previous(self, previous: Holder | None, kernel_locked: bool | None) -> None:
        if previous is None or (previous.pid, previous.host) == (os.getpid(), socket.gethostname()):
            return
        if previous.host != socket.gethostname():
            raise self._held(previous, other_host=True)
        if kernel_locked is None and pid_alive(previous.pid):
            raise self._held(previous)
        # kernel_locked: the kernel granted the lock, so its holder on this host is gone

    def _write_me(self, fd: int) -> None:
        text = json.dumps(asdict(Holder.me())) + "\n"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, text.encode("utf-8"), 0)
            os.fsync(fd)
        except OSError as exc:  # a full disk: one clear line, nothing else written yet
            raise CannotWrite(f"cannot write to {self.path}: {exc.strerror or exc}") from None

    def _held(self, holder: Holder | None, other_host: bool = False) -> LockHeld:
        who = holder.describe() if holder else "another process (it has not written its pid yet)"
        if other_host:
            return LockHeld(f"{self.path}: {self.what} was locked by {who}; this host cannot tell whether that "
                            f"process still runs. If it does not, delete {self.path} and rerun", holder)
        return LockHeld(f"{self.what} is already running: {who}; wait for it to finish (or stop it), then rerun",
                        holder)


def lock_holder_if_locked(path: Path) -> Holder | None:
    """The holder of a lock that a live process holds now, else None; never writes (works read-only)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_holder(path) or Holder(pid=0, host="?", started_at="?")
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


def describe_takeover(lock: RunLock) -> str | None:
    """A note for the user when a lock left by a dead process was taken over."""
    h = lock.took_over
    if h is None:
        return None
    return f"note: took over {lock.path}, left by {h.describe()}, which is no longer running"
