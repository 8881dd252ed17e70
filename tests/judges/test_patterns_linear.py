"""Every pattern of every rules reader runs in linear time on 1 MB hostile runs (issue 20).

Each module-level pattern of judges.rules is fed runs of spaces, tabs, newlines, '>', '*', '#', letters,
digits and parentheses, alone and mixed, the way its module uses it: scanned (search, finditer, sub) or
matched at one position (match, fullmatch). The time at 1 MB is compared with the same input at 1/20
length: a ratio, with a cap derived from the small time and a C-speed pass over the large input.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import time

import pytest

import judges.rules as rules

LARGE = 1_000_000
SCALE = 20
UNITS = {
    "spaces": " ", "tabs": "\t", "newlines": "\n", "quotes": ">", "stars": "*", "hashes": "#",
    "letters": "answerIsB", "digits": "0123456789", "parentheses": "(C) ",
    "blank-markup": " \t\n> * # \n\n", "everything": " \t\n>*#aB1(C)answer is: ",
}
_SCANNING_CALL = r"\.(?:search|finditer|findall|sub|subn|split)\("


def _patterns() -> list[tuple[str, object, bool]]:
    """(module.name, compiled pattern, scanned?) for every pattern a rules module holds."""
    found = []
    for info in pkgutil.iter_modules(rules.__path__):
        module = importlib.import_module(f"judges.rules.{info.name}")
        source = inspect.getsource(module)
        for name, value in vars(module).items():
            members = value if isinstance(value, tuple) else (value,)
            for k, pattern in enumerate(members):
                if not hasattr(pattern, "pattern") or not hasattr(pattern, "finditer") or isinstance(pattern, str):
                    continue
                scanned = bool(re.search(rf"\b{re.escape(name)}(?:\[\d\])?{_SCANNING_CALL}", source)) or \
                    bool(re.search(rf"(?:in|for) \w+ in {re.escape(name)}\b|_from_last\({re.escape(name)}\b", source))
                label = f"{info.name}.{name}" + (f"[{k}]" if isinstance(value, tuple) else "")
                found.append((label, pattern, scanned))
    return found


PATTERNS = _patterns()


def _run(pattern, text: str, scanned: bool) -> float:
    start = time.perf_counter()
    if scanned:
        for _ in pattern.finditer(text):
            pass
    else:
        pattern.match(text)
        pattern.fullmatch(text)
    return time.perf_counter() - start


def _c_speed_pass(text: str) -> float:
    start = time.perf_counter()
    text.encode("utf-8").count(b"\x00")
    return time.perf_counter() - start


def test_every_rules_pattern_is_found():
    names = {label for label, _, _ in PATTERNS}
    assert len(PATTERNS) > 60
    assert {"gpqa_leadins._LABEL_AT_RE", "gpqa._AT_ANSWER[0]", "aime._BARE_NUMBER_RE", "extract._RETRACT_RE"} <= names


def _super_linear(pattern, scanned: bool, unit: str) -> str | None:
    """Why the pattern is not linear on runs of unit, or None; lengths grow 500 -> 5 KB -> 50 KB -> 1 MB,
    so a quadratic pattern is caught at a size where it still finishes in a fraction of a second."""
    previous = None
    for size in (500, 5_000, LARGE // SCALE, LARGE):
        text = unit * (size // len(unit))
        elapsed = min(_run(pattern, text, scanned) for _ in range(1 if size == LARGE else 3))
        if previous is not None:
            t_prev, size_prev = previous
            ratio = size / size_prev
            # Linear code takes ~ratio times as long; quadratic code ratio squared. The cap allows 5x over
            # linear, plus C-speed passes over the input for fixed costs and a busy machine's pauses.
            cap = 5 * ratio * t_prev + 200 * min(_c_speed_pass(text) for _ in range(3))
            for _ in range(2):  # two more looks before blaming the pattern for a busy machine
                if elapsed <= cap:
                    break
                elapsed = min(elapsed, _run(pattern, text, scanned))
            if elapsed > cap:
                return f"{elapsed:.4f}s at {size:,} characters vs {t_prev:.5f}s at {size_prev:,}"
        previous = (elapsed, size)
    return None


@pytest.mark.slow  # about 10 s per shape on the 2-core machine
@pytest.mark.parametrize("unit_name", UNITS)
def test_every_pattern_is_linear_on_hostile_runs(unit_name):
    slow = []
    for label, pattern, scanned in PATTERNS:
        why = _super_linear(pattern, scanned, UNITS[unit_name])
        if why:
            slow.append(f"{label} ({'scanned' if scanned else 'matched'}): {why}")
    assert not slow, "super-linear patterns:\n" + "\n".join(slow)
