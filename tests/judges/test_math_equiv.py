"""math_equiv: exact where it can be, undecided (None) where it cannot, bounded in time and size."""
from __future__ import annotations

import asyncio
import sys
import threading
import time

import pytest

from judges.rules.math_equiv import MAX_INPUT_CHARS, amath_equiv, math_equiv, shutdown

EQUAL = [
    ("\\frac{1}{2}", "0.5"),
    ("\\dfrac{3}{6}", "1/2"),
    ("\\sqrt{8}", "2\\sqrt{2}"),
    ("\\sqrt[3]{27}", "3"),
    ("\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}"),
    ("\\{1, 2, 3\\}", "\\{3, 1, 2\\}"),
    ("1, 2", "2, 1"),
    ("(1, 2)", "(1,2)"),
    ("1 \\pm \\sqrt{2}", "1-\\sqrt2, 1+\\sqrt 2"),
    ("x = 5", "5"),
    ("x^2 - 1", "(x-1)(x+1)"),
    ("2x + 1", "1 + 2x"),
    ("\\pi/2", "\\frac{\\pi}{2}"),
    ("e^{2}", "\\exp(2)"),
    ("3 + 2i", "2i + 3"),
    ("\\binom{5}{2}", "10"),
    ("5!", "120"),
    ("[1, 2)", "[1,2)"),
    ("1,000", "1000"),  # a whole answer with thousands separators is one number
    ("1{,}000", "1000"),
    ("12,345,678", "12345678"),
    ("No", "no"),
    ("\\text{no solution}", "No Solution"),
    ("2**3", "8"),
    ("\\text{yes}", "yes"),
    ("$\\frac{7}{4}$", "1.75"),
    ("45^\\circ", "45"),
    ("\\alpha + \\beta", "\\beta + \\alpha"),
    ("\\lambda^2", "\\lambda \\lambda"),
    ("\\{\\}", "\\emptyset"),
    ("(-\\infty, 3]", "(-\\infty,3]"),
    ("e^{i\\pi}", "-1"),  # complex exponents pass the size guard
    ("(1+i)^2", "2i"),
    ("N + 1", "1 + N"),  # N, S, Q are plain symbols, not sympy's objects
    ("2S", "S + S"),
]
DIFFERENT = [
    ("0.333", "\\frac{1}{3}"),  # no tolerance
    ("720.05", "720"),
    ("0.25", "25"),  # no percent rescaling
    ("(1, 2)", "(2, 1)"),  # tuples are ordered
    ("\\{1, 2\\}", "\\{1, 2, 3\\}"),
    ("[1, 2]", "(1, 2)"),  # closed vs open interval
    ("2x", "2"),
    ("\\sqrt{2}", "\\sqrt{3}"),
    ("1 \\pm \\sqrt{2}", "1+\\sqrt{2}"),
    ("(1, 2, 3)", "\\{1, 2, 3\\}"),  # a tuple is not a set
    ("\\alpha", "\\beta"),
    ("\\emptyset", "\\{1\\}"),
    ("(3,141)", "3141"),  # a pair, not a number with a thousands separator
    ("\\{1,234\\}", "1234"),  # a set of two numbers
    ("(1,000)", "1000"),
    ("2**3", "23"),  # a power
]


@pytest.mark.parametrize("a,b", EQUAL)
def test_equal(a, b):
    assert math_equiv(a, b) is True
    assert math_equiv(b, a) is True


@pytest.mark.parametrize("a,b", DIFFERENT)
def test_different(a, b):
    assert math_equiv(a, b) is False


@pytest.mark.parametrize("a,b", [
    ("__import__('os').system('true')", "0"),  # never evaluated as Python
    ("x.__class__", "1"),
    ("\\unknowncommand{3}", "3"),
    ("2^{2^{2^{2^{10}}}}", "3"),  # a number too large to build
    ("100000000!", "1"),  # sympy would compute it while parsing
    ("the mitochondria", "the nucleus"),
    ("\\frac{1}{0}", "2"),  # undefined
    ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1, 2)"),  # not understood is not "different"
    ("x > 3", "3 < x"),
    ("no", "on"),  # words, not the products n*o and o*n: never equal, and not math_equiv's to call different
    ("yes", "no"),
])
def test_undecidable_or_unsafe_inputs_are_none(a, b):
    assert math_equiv(a, b) is None


def test_oversized_input_returns_none_at_once(monkeypatch):
    module = sys.modules["judges.rules.math_equiv"]  # the package exports a function of the same name

    def no_worker(*args, **kwargs):
        raise AssertionError("an oversized input reached a sympy worker")

    monkeypatch.setattr(module, "request", no_worker)  # no worker, no sympy: only the length check
    assert math_equiv("1+" * MAX_INPUT_CHARS + "1", "501") is None


def test_expression_size_cap_is_undecided():
    # Under the character cap but over the node cap: refused before sympy evaluates it.
    assert math_equiv("+".join(["xy"] * 160), "160xy") is None
    assert math_equiv("+".join(["xy"] * 50), "50xy") is True


def test_runaway_simplify_times_out_off_the_main_thread_and_the_pool_recovers():
    slow = ("\\frac{(a+b+c)^{30}}{(a-b)^{7}}", "\\frac{(a+b+c)^{29}}{(a-b)^{6}}")  # several seconds of simplify
    math_equiv("\\sqrt{2}", "2^{1/2}")  # start the workers so the timing below is the comparison's alone
    results: dict[str, object] = {}

    def run() -> None:
        start = time.perf_counter()
        results["value"] = math_equiv(*slow, timeout_s=0.5)
        results["elapsed"] = time.perf_counter() - start

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert results["value"] is None
    assert results["elapsed"] < 3.0
    # The killed worker is replaced: the next comparison still gets an answer.
    assert math_equiv("\\sqrt{8}", "2\\sqrt{2}") is True


def test_many_threads_share_the_workers():
    pairs = [("\\sqrt{%d}" % (n * n * 2), "%d\\sqrt{2}" % n) for n in range(2, 14)]
    out: list[object] = [None] * len(pairs)

    def work(i: int) -> None:
        out[i] = math_equiv(*pairs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert out == [True] * len(pairs)


def test_shutdown_then_reuse():
    assert math_equiv("x^2", "x \\cdot x") is True
    shutdown()
    assert math_equiv("x^2", "x \\cdot x") is True


def test_async_callers_keep_their_event_loop_running():
    async def main() -> tuple[list, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        tick_task = asyncio.create_task(ticker())
        results = await asyncio.gather(amath_equiv("\\sqrt{12}", "2\\sqrt{3}"), amath_equiv("\\{1, 2\\}", "\\{2, 3\\}"),
                                       amath_equiv("\\frac{(a+b+c)^{30}}{(a-b)^{7}}", "\\frac{(a+b+c)^{29}}{(a-b)^{6}}", timeout_s=0.5))
        tick_task.cancel()
        return results, ticks

    results, ticks = asyncio.run(main())
    assert results == [True, False, None]
    assert ticks >= 5  # the loop ran while the comparisons waited
