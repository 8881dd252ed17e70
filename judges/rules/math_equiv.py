"""math_equiv: are two math answers the same? Exact fast path here, sympy in killable worker processes.

Safe from any thread: no signals; a comparison that overruns its timeout has its worker killed
and answers None. Workers start on first use and are reused.
"""
from __future__ import annotations

import asyncio
import re

from judges.rules.normalise import expression_text
from judges.rules.numbers import exact_value
from judges.rules.sympy_pool import WorkerTimeout, WorkerUnavailable, request, shutdown

MAX_INPUT_CHARS = 500  # longer "answers" are prose; deciding them is not this function's job
DEFAULT_TIMEOUT_S = 5.0
# An answer of words ("no", "Yes", "no solution") is text, not the product n*o (so "no" is not "on"):
# the same words are equal, other words are not math_equiv's to judge (None). A single letter stays a
# math symbol: "x" and "X" differ.
_WORDS_RE = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*")
_LONG_WORD_RE = re.compile(r"[A-Za-z]{2}")

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_INPUT_CHARS", "amath_equiv", "math_equiv", "shutdown"]


def _is_words(text: str) -> bool:
    return _WORDS_RE.fullmatch(text) is not None and _LONG_WORD_RE.search(text) is not None


def math_equiv(a: str, b: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bool | None:
    """True/False when a and b are decidably equal/different math answers; None when undecidable in time.

    Sets compare in any order, tuples in order, "\\pm" is a set of two values, decimals are exact
    ("0.5" equals "1/2", "0.333" does not equal "1/3"); no numeric tolerance anywhere. A whole answer
    "1,000" is the number 1000, while "(3,141)" is a pair and "\\{1,234\\}" a set of two numbers.
    """
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    if len(a) > MAX_INPUT_CHARS or len(b) > MAX_INPUT_CHARS:
        return None
    ca, cb = expression_text(a), expression_text(b)
    if not ca or not cb:
        return None
    if ca.replace(" ", "") == cb.replace(" ", ""):
        return True
    if _is_words(ca) and _is_words(cb):
        return True if ca.lower() == cb.lower() else None
    va, vb = exact_value(ca), exact_value(cb)
    if va is not None and vb is not None:
        return va == vb
    try:
        return request({"a": a, "b": b}, timeout_s).get("result")
    except (WorkerTimeout, WorkerUnavailable):
        return None


async def amath_equiv(a: str, b: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bool | None:
    """math_equiv for async judges: the wait happens in a thread, so the event loop keeps serving."""
    return await asyncio.to_thread(math_equiv, a, b, timeout_s)
