"""Errors a user can act on: printed as one clear message, never as a traceback."""
from __future__ import annotations

from engine.base import EngineError
from judges.base import JudgeError
from records import RecordError
from tasks.errors import DataError


class RunDirError(Exception):
    """A run directory that is missing, inconsistent with the request, or corrupt."""


UserError = (DataError, EngineError, JudgeError, RecordError, RunDirError, ValueError, FileNotFoundError)


def format_user_error(exc: BaseException) -> str:
    return f"error: {exc}"
