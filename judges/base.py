"""The judge interface: one generation record in, one verdict out."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from records import GenerationRecord


class JudgeError(Exception):
    """A judge that cannot be used at all (bad configuration, unsupported task)."""


class JudgeConfigError(JudgeError):
    """Raised while grading when every request would fail the same way (e.g. a parameter the judge's
    server rejects): the grade stage stops with this message instead of writing a judge_error per sample."""


@dataclass
class Verdict:
    """A judge's reading of one response.

    status is 'graded' (correct is a bool), 'no_answer' (no final answer found; the grade stage
    turns it into 'truncated' when the generation hit its token limit), 'ambiguous' (an answer that
    contradicts itself; never correct) or 'judge_error' (the judge itself failed; correct is None and a
    rerun retries it).
    """

    correct: bool | None
    extracted: str | None
    status: str
    detail: dict[str, Any] = field(default_factory=dict)


class Judge(ABC):
    """Grades generation records. Sync judges override grade(); async ones override agrade()."""

    judge_id: str = "judge"  # names the grades/<judge_id>/ folder: judge kind plus version or config hash
    is_async: bool = False
    tasks: tuple[str, ...] = ()  # tasks this judge can grade; empty means any

    def grade(self, record: GenerationRecord) -> Verdict:
        raise NotImplementedError

    async def agrade(self, record: GenerationRecord) -> Verdict:
        return self.grade(record)

    def check_task(self, task: str) -> None:
        if self.tasks and task not in self.tasks:
            raise JudgeError(
                f"judge {self.judge_id!r} cannot grade task {task!r}; it grades: {', '.join(self.tasks)}"
            )

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Judge settings for summary.json; never includes secrets."""

    async def aclose(self) -> None:
        """Release clients."""
