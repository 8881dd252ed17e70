"""Exact reading of a final-answer string as a number: a tiny rational evaluator, no sympy, no floats.

"25.00" and "\\dfrac{50}{2}" are 25 exactly, "720.05" is not 720; "10^{10^{10}}" is refused, never built.
"""
from __future__ import annotations

import re
from fractions import Fraction

from judges.rules.normalise import final_answer_text

MAX_ANSWER_CHARS = 200  # a longer "answer" is prose, not a number
_MAX_BITS = 4096  # ~1,200 digits: any larger value is refused before it is built

_TOKEN_RE = re.compile(r"\s*(\d+\.?\d*|\.\d+|\\[a-zA-Z]+|[-+*/^(){}\[\]×·÷])")
_OPS = {"\\cdot": "*", "\\times": "*", "\\div": "/", "\\ast": "*", "×": "*", "·": "*", "÷": "/"}
# Letter-free arithmetic that the exact parser below leaves to sympy: roots, binomials, factorials.
_CLOSED_FORM_COMMAND_RE = re.compile(r"\\(?:[dt]?frac|sqrt|[dt]?binom|cdot|times|div|ast)(?![A-Za-z])")
_CLOSED_FORM_REST_RE = re.compile(r"[\d\s+\-*/^(){}\[\]!.×·÷]*")
_NEEDS_SYMPY_RE = re.compile(r"\\sqrt|\\[dt]?binom|!")


def _tokens(s: str) -> list[str] | None:
    out: list[str] = []
    pos = 0
    s = s.rstrip()
    while pos < len(s):
        m = _TOKEN_RE.match(s, pos)
        if not m:
            return None
        tok = m.group(1)
        out.append(_OPS.get(tok, tok))
        pos = m.end()
    return out


class TooLarge(ValueError):
    """A value (or a power on the way to it) beyond _MAX_BITS: refused, never computed."""


class _Parser:
    """Recursive descent over + - * / ^, parentheses, braces and \\frac; anything else is refused."""

    def __init__(self, toks: list[str]):
        self.toks, self.i = toks, 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        if self.peek() != tok:
            raise ValueError(tok)
        self.i += 1

    def expr(self) -> Fraction:
        v = self.term()
        while self.peek() in ("+", "-"):
            v = v + self.term() if self.take() == "+" else v - self.term()
        return v

    def term(self) -> Fraction:
        v = self.unary()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                v = v * self.unary()
            else:
                d = self.unary()
                if d == 0:
                    raise ValueError("division by zero")
                v = v / d
        return v

    def unary(self) -> Fraction:
        if self.peek() in ("+", "-"):
            return -self.unary() if self.take() == "-" else self.unary()
        return self.power()

    def power(self) -> Fraction:
        base = self.atom()
        if self.peek() != "^":
            return base
        self.take()
        exp = self.unary()
        if exp.denominator != 1 or (base == 0 and exp < 0):
            raise ValueError("exponent")
        # Bound the result's size before computing it: 10^10^10 must be refused, not built.
        base_bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if abs(base) not in (0, 1) and abs(exp) * base_bits > _MAX_BITS:
            raise TooLarge
        return base ** int(exp)

    def atom(self) -> Fraction:
        tok = self.take() if self.peek() is not None else None
        if tok is None:
            raise ValueError("end")
        if tok in ("(", "{", "["):
            v = self.expr()
            self.expect({"(": ")", "{": "}", "[": "]"}[tok])
            return v
        if tok in ("\\frac", "\\dfrac", "\\tfrac"):
            self.expect("{")
            num = self.expr()
            self.expect("}")
            self.expect("{")
            den = self.expr()
            self.expect("}")
            if den == 0:
                raise ValueError("division by zero")
            return num / den
        if tok.isdigit():
            return Fraction(int(tok))
        if tok[0].isdigit() or tok[0] == ".":
            return Fraction(tok)
        raise ValueError(tok)


def evaluate(text: str) -> tuple[Fraction | None, str | None]:
    """The exact rational value of a cleaned answer string, or None and why ("too large", "not arithmetic")."""
    if not text or len(text) > MAX_ANSWER_CHARS:
        return None, "not arithmetic"
    toks = _tokens(text)
    if not toks:
        return None, "not arithmetic"
    p = _Parser(toks)
    try:
        v = p.expr()
    except TooLarge:
        return None, "too large"
    except (ValueError, IndexError, ZeroDivisionError, OverflowError, RecursionError):
        return None, "not arithmetic"
    return (v, None) if p.i == len(toks) else (None, "not arithmetic")


def exact_value(text: str) -> Fraction | None:
    """The exact rational value of a cleaned answer string, or None if it is not plain arithmetic."""
    return evaluate(text)[0]


def integer_value(text: str) -> int | None:
    """The integer a final answer denotes ("025", "25.0", "\\dfrac{50}{2}", "25^\\circ", "2**3"), else None."""
    if len(text) > MAX_ANSWER_CHARS:
        return None  # prose, or a number far beyond any answer (int() itself refuses 4,300+ digits)
    if text.isdigit() and text.isascii():
        return int(text)  # the common case, without the parser
    v = exact_value(final_answer_text(text))
    if v is None or v.denominator != 1:
        return None
    return int(v)


def needs_sympy(clean: str) -> bool:
    """Whether a cleaned answer is letter-free arithmetic with roots, binomials or factorials (for sympy)."""
    if len(clean) > MAX_ANSWER_CHARS or not _NEEDS_SYMPY_RE.search(clean):
        return False
    return _CLOSED_FORM_REST_RE.fullmatch(_CLOSED_FORM_COMMAND_RE.sub(" ", clean)) is not None
