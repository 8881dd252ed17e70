"""Exact reading of a final-answer string as a number: LaTeX clean-up and a tiny rational evaluator.

No sympy and no floating point: "25.00" and "\\dfrac{50}{2}" are 25 exactly, "720.05" is not 720.
"""
from __future__ import annotations

import re
from fractions import Fraction

MAX_ANSWER_CHARS = 200  # a longer "answer" is prose, not a number
_MAX_EXPONENT = 64
_MAX_BITS = 4096

_WRAPPER_RE = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox|operatorname|displaystyle)\s*\{([^{}]*)\}")
_DEGREE_RE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°|º")
_SPACING_RE = re.compile(r"\\[,!;: ]|~|\\quad|\\qquad")
_DROP_RE = re.compile(r"\\%|%|\\\$|\\left|\\right|\\displaystyle|\*\*|__")
_MOD_RE = re.compile(r"\\pmod\s*\{[^{}]*\}|\(\s*\\?(?:bmod|mod)\s*\d+\s*\)|\\pmod\s*\d+")
_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# Trailing unit words ("cm", "square units", "dollars", "m^2"), only after something ending in a digit.
_UNIT_TAIL_RE = re.compile(r"(?<=[\d}).])(?:\s*[A-Za-z][A-Za-z.]*(?:\s*\^\{?[23]\}?|[²³])?)+\s*$")
_TOKEN_RE = re.compile(r"\s*(\d+\.?\d*|\.\d+|\\[a-zA-Z]+|[-+*/^(){}\[\]])")
_OPS = {"\\cdot": "*", "\\times": "*", "\\div": "/", "\\ast": "*"}


def clean_answer(text: str) -> str:
    """Strip math delimiters, text wrappers, degrees, units and spacing from a final answer."""
    s = text.strip().replace("−", "-")  # U+2212, the typeset minus
    for _ in range(3):  # \text{\textbf{25}}
        s2 = _WRAPPER_RE.sub(r" \1 ", s)
        if s2 == s:
            break
        s = s2
    s = _DEGREE_RE.sub("", s)
    s = _SPACING_RE.sub("", s)
    s = s.replace("{,}", ",")
    s = _DROP_RE.sub("", s)
    s = s.replace("$", "").replace("\\(", "").replace("\\)", "").replace("\\[", "").replace("\\]", "")
    s = _MOD_RE.sub("", s).replace("\\equiv", "=").replace("≡", "=")
    # "m+n=25", "x = 25", "N \\equiv 25": the final value is the right-hand side of the last one.
    if "=" in s:
        s = s.rsplit("=", 1)[1]
    s = s.strip().rstrip(".").strip()
    s = _UNIT_TAIL_RE.sub("", s).strip().rstrip(".").strip()
    if _THOUSANDS_RE.fullmatch(s):
        s = s.replace(",", "")
    return s


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
        if exp.denominator != 1 or abs(exp) > _MAX_EXPONENT or (base == 0 and exp < 0):
            raise ValueError("exponent")
        v = base ** int(exp)
        if max(v.numerator.bit_length(), v.denominator.bit_length()) > _MAX_BITS:
            raise ValueError("too large")
        return v

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


def exact_value(text: str) -> Fraction | None:
    """The exact rational value of a cleaned answer string, or None if it is not plain arithmetic."""
    if not text or len(text) > MAX_ANSWER_CHARS:
        return None
    toks = _tokens(text)
    if not toks:
        return None
    p = _Parser(toks)
    try:
        v = p.expr()
    except (ValueError, IndexError, ZeroDivisionError, OverflowError):
        return None
    return v if p.i == len(toks) else None


def integer_value(text: str) -> int | None:
    """The integer a final answer denotes ("025", "25.0", "\\dfrac{50}{2}", "25^\\circ"), else None."""
    if text.isdigit() and text.isascii():
        return int(text)  # the common case, without the parser
    v = exact_value(clean_answer(text))
    if v is None or v.denominator != 1:
        return None
    return int(v)
