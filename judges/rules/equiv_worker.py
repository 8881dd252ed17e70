"""The sympy side of math_equiv and of the AIME reader, run in a child process so a runaway simplify can be killed.

Protocol: one JSON object per line on stdin, one reply per line on stdout; the first line written is
{"ready": true}. {"a": ..., "b": ...} asks whether two answers are equal: {"result": true | false | null}.
{"integer": ...} asks for the exact integer value of a letter-free expression:
{"integer": "540" | null, "reason": ...}.
"""
from __future__ import annotations

import json
import math
import re
import sys

from judges.rules.latex import GREEK, Answer, LatexError, structure, to_expr
from judges.rules.normalise import drop_left_variable

MAX_NODES = 400  # sympy tree nodes per side, before evaluation
MAX_ITEMS = 16  # elements of a set or tuple
_MAX_EXPONENT = 1000
_MAX_DIGITS = 5000
_MAX_REPLY_DIGITS = 1000  # an integer this long is far outside any answer range; not worth sending
_ATTRIBUTE_RE = re.compile(r"\.(?!\d)|(?<![\d\s(+\-*/^,])\.")  # a dot that is not a decimal point
_FACTORIAL_ARG_RE = re.compile(r"(?<!\d)(\d+)\s*(?:\)\s*)*!")  # one start per digit run: linear
_LONG_NUMBER_RE = re.compile(r"\d{60}")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_ALLOWED_CHARS_RE = re.compile(r"[0-9A-Za-z_+\-*/^()., !]*")
_FUNCS = {"sqrt", "root", "pi", "oo", "E", "I", "log", "exp", "sin", "cos", "tan", "cot", "sec", "csc",
          "asin", "acos", "atan", "sinh", "cosh", "tanh", "binomial", "factorial"}


class Undecided(Exception):
    """Outside what this checker can decide safely; the answer is None."""


def _safe_source(expr: str) -> str:
    # parse_expr evaluates Python: allow only arithmetic, known functions and one-letter symbols.
    if not _ALLOWED_CHARS_RE.fullmatch(expr) or "__" in expr or _ATTRIBUTE_RE.search(expr):
        raise Undecided("characters")

    def ident(m: re.Match) -> str:
        name = m.group()
        if name in _FUNCS or (name.endswith("_") and name[:-1] in GREEK):
            return name
        if name in ("e", "i"):  # Euler's number and the imaginary unit, as answers use them
            return {"e": "E", "i": "I"}[name]
        if name.isalpha() and len(name) <= 3:  # "xy" is x*y, as a reader would take it
            return "*".join(name)
        raise Undecided(f"name {name!r}")

    return _IDENT_RE.sub(ident, expr)


def _parse(item: str):
    import sympy
    from sympy.parsing.sympy_parser import (convert_xor, factorial_notation, implicit_multiplication_application,
                                            parse_expr, rationalize, standard_transformations)

    item = drop_left_variable(item)
    try:
        source = _safe_source(to_expr(item))
    except LatexError as exc:
        raise Undecided(str(exc)) from exc
    if not source.strip():
        raise Undecided("empty")
    # sympy builds n! while parsing, before _guard could see it.
    if any(int(n) > 1000 for n in _FACTORIAL_ARG_RE.findall(source)) or _LONG_NUMBER_RE.search(source):
        raise Undecided("number too large")
    transforms = standard_transformations + (implicit_multiplication_application, convert_xor, rationalize,
                                             factorial_notation)
    try:
        raw = parse_expr(source, local_dict=_local_names(sympy), transformations=transforms, evaluate=False)
    except Exception as exc:  # sympy raises many kinds on bad syntax
        raise Undecided(f"parse: {exc}") from exc
    _guard(raw, sympy)
    try:
        expr = parse_expr(source, local_dict=_local_names(sympy), transformations=transforms, evaluate=True)
    except Exception as exc:
        raise Undecided(f"evaluate: {exc}") from exc
    if expr.has(sympy.zoo, sympy.nan):
        raise Undecided("undefined value")  # 1/0 is no answer to compare
    return expr


def _local_names(sympy) -> dict:
    # Plain symbols: sympy would otherwise read "beta", "gamma", "zeta" as special functions and
    # the letters N, S, O, Q as its own objects.
    names = {f"{name}_": sympy.Symbol(name) for name in GREEK}
    names.update({c: sympy.Symbol(c) for c in "ABCDFGHJKLMNOPQRSTUVWXYZabcdfghjklmnopqrstuvwxyz"})
    return names


def _magnitude(value) -> float:
    """|value| of a numeric sympy expression (complex allowed), via 15-digit evaluation."""
    try:
        return abs(complex(value.evalf(15)))
    except (TypeError, ValueError, OverflowError) as exc:
        raise Undecided("magnitude") from exc


def _guard(expr, sympy) -> None:
    """Refuse trees that are too big or numbers that would take unbounded time to build."""
    count = 0
    for node in sympy.preorder_traversal(expr):
        count += 1
        if count > MAX_NODES:
            raise Undecided("expression too large")
        if isinstance(node, sympy.Pow) and node.exp.is_number:
            exp = _magnitude(node.exp)
            if exp > _MAX_EXPONENT:
                raise Undecided("exponent too large")
            if node.base.is_number and exp * math.log10(max(2.0, _magnitude(node.base))) > _MAX_DIGITS:
                raise Undecided("power too large")
        if isinstance(node, sympy.factorial) and node.args[0].is_number and _magnitude(node.args[0]) > 1000:
            raise Undecided("factorial too large")


def _scalar_equal(a, b) -> bool | None:
    import sympy

    if a == b:
        return True
    diff = sympy.simplify(a - b)
    if diff == 0:
        return True
    verdict = diff.equals(0)
    return None if verdict is None else bool(verdict)


def _items_equal(xs: list, ys: list, ordered: bool) -> bool | None:
    if len(xs) != len(ys):
        return False
    if ordered:
        results = [_scalar_equal(x, y) for x, y in zip(xs, ys)]
        if False in results:
            return False
        return None if None in results else True
    remaining = list(ys)
    undecided = False
    for x in xs:
        for j, y in enumerate(remaining):
            r = _scalar_equal(x, y)
            if r:
                del remaining[j]
                break
            undecided |= r is None
        else:
            return None if undecided else False
    return True


def compare(a_text: str, b_text: str) -> bool | None:
    """Whether two answers denote the same value or collection; None when it cannot be decided."""
    a, b = structure(a_text), structure(b_text)
    if len(a.items) > MAX_ITEMS or len(b.items) > MAX_ITEMS:
        raise Undecided("too many items")
    if a.kind == "interval" and b.kind == "tuple" and len(b.items) == 2:
        b = Answer("interval", b.items)  # "(1, 2)" next to an interval is the open interval
    if b.kind == "interval" and a.kind == "tuple" and len(a.items) == 2:
        a = Answer("interval", a.items)
    if a.kind == "scalar" and b.kind == "set" and len(b.items) == 1:
        b = Answer("scalar", b.items)
    if b.kind == "scalar" and a.kind == "set" and len(a.items) == 1:
        a = Answer("scalar", a.items)
    # Parse both sides first: an answer this checker cannot read is undecided, never "different".
    xs, ys = [_parse(x) for x in a.items], [_parse(y) for y in b.items]
    if a.kind != b.kind:
        return False
    if a.kind == "interval" and (a.left_closed, a.right_closed) != (b.left_closed, b.right_closed):
        return False
    return _items_equal(xs, ys, ordered=a.kind != "set")


def integer(text: str) -> dict:
    """The exact integer value of a letter-free expression, or null with the reason."""
    import sympy

    expr = _parse(text)
    if expr.free_symbols:
        return {"integer": None, "reason": "not an integer"}
    if not expr.is_Integer:
        expr = sympy.simplify(expr)  # (sqrt(3)+1)(sqrt(3)-1): exact rewriting, never a numeric estimate
    if not expr.is_Integer:
        return {"integer": None, "reason": "not an integer"}
    if len(str(abs(int(expr)))) > _MAX_REPLY_DIGITS:
        return {"integer": None, "reason": "too large"}
    return {"integer": str(int(expr))}


def _answer(req: dict) -> dict:
    if "integer" in req:
        return integer(req["integer"])
    return {"result": compare(req["a"], req["b"])}


def main() -> None:
    import sympy  # noqa: F401  (imported before "ready" so the first request is not charged for it)

    out = sys.stdout
    sys.stdout = sys.stderr  # anything sympy prints must not corrupt the reply stream
    out.write('{"ready": true}\n')
    out.flush()
    for line in sys.stdin:
        try:
            reply = _answer(json.loads(line))
        except Undecided as exc:
            reply = {"result": None, "integer": None, "reason": str(exc)[:200]}
        except Exception as exc:  # an unexpected sympy failure is undecided, never a crash of the worker
            reply = {"result": None, "integer": None, "reason": f"sympy failed: {type(exc).__name__}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
