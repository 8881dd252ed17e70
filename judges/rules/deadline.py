"""A per-sample time limit for the rules judge: checked between steps, so grading can give up and move on."""
from __future__ import annotations

import time


class SampleTimeout(Exception):
    """Grading one sample ran past its time limit; the message says how long and at which step."""


class Deadline:
    """A time limit started at construction; check() raises SampleTimeout once it has passed."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self._end = time.monotonic() + limit_s

    def left(self) -> float:
        return self._end - time.monotonic()

    def check(self, doing: str) -> None:
        """Raise SampleTimeout("timed out after 5 s <doing>") when the time is up."""
        if time.monotonic() >= self._end:
            raise self.timeout(doing)

    def timeout(self, doing: str) -> SampleTimeout:
        return SampleTimeout(f"timed out after {self.limit_s:g} s {doing}")

