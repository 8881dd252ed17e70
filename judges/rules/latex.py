"""LaTeX-ish answers to a structure (scalar, set, tuple, interval) and to sympy-parsable expression strings.

Pure string work, no sympy: the worker process parses the resulting expression strings. Clean-up of the
answer text itself (wrappers, units, spacing) is judges.rules.normalise's job.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from judges.rules.normalise import expression_text

_WORD_SEP_RE = re.compile(r"(?<!\s)\s+(?:or|and)\s+")  # starts only where a space run does: linear
_SIMPLE = {"\\cdot": "*", "\\times": "*", "\\div": "/", "\\pi": "pi", "\\infty": "oo", "\\ln": "log",
           "\\log": "log", "\\exp": "exp", "\\sin": "sin", "\\cos": "cos", "\\tan": "tan", "\\cot": "cot",
           "\\sec": "sec", "\\csc": "csc", "\\arcsin": "asin", "\\arccos": "acos", "\\arctan": "atan",
           "\\sinh": "sinh", "\\cosh": "cosh", "\\tanh": "tanh", "\\le": "<=", "\\ge": ">=", "\\infinity": "oo"}
_COMMAND_RE = re.compile(r"\\[A-Za-z]+")
_TWO_ARGUMENTS_RE = re.compile(r"\\[dt]?(?:frac|binom)(?![A-Za-z])")
GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "kappa",
         "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "phi", "varphi", "chi", "psi", "omega",
         "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma", "Phi", "Psi", "Omega")
_SIMPLE.update({f"\\{name}": f"{name}_" for name in GREEK})  # "alpha_" etc.: never a Python keyword or sympy name
_EMPTY_SET = {"\\emptyset", "\\varnothing", "\\{\\}", "\\{ \\}", "∅"}


class LatexError(ValueError):
    """An answer this converter does not understand; the comparison is then undecided."""


@dataclass
class Answer:
    """kind: 'scalar' (one item), 'set' (any order), 'tuple' (ordered), 'interval' (items = [lo, hi])."""

    kind: str
    items: list[str]
    left_closed: bool = False
    right_closed: bool = False


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split on sep outside any brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    parts.append(s[start:])
    return [p.strip() for p in parts]


def _closes_at_end(s: str, opener: int) -> bool:
    """Whether the bracket opened at s[opener] is closed by the last character, not earlier."""
    depth = 0
    for i in range(opener, len(s)):
        depth += s[i] in "([{"
        depth -= s[i] in ")]}"
        if depth == 0:
            return i == len(s) - 1
    return False


def structure(text: str) -> Answer:
    """Read the outer shape of an answer; items stay LaTeX-ish strings."""
    s = expression_text(text)
    if s in _EMPTY_SET:
        return Answer("set", [])
    s = _WORD_SEP_RE.sub(", ", s)
    if s.startswith("\\{") and s.endswith("\\}"):
        return Answer("set", [p for p in _split_top(s[2:-2]) if p])
    if len(s) >= 2 and s[0] in "([" and s[-1] in ")]" and _closes_at_end(s, 0):
        inner = _split_top(s[1:-1])
        if len(inner) == 2 and (s[0] == "[" or s[-1] == "]"):
            return Answer("interval", inner, s[0] == "[", s[-1] == "]")
        if len(inner) >= 2:
            return Answer("tuple", inner)
    parts = _split_top(s)
    if len(parts) >= 2:
        return Answer("set", [p for p in parts if p])
    if "\\pm" in s or "±" in s:
        pm = "\\pm" if "\\pm" in s else "±"
        return Answer("set", [s.replace(pm, "+", 1), s.replace(pm, "-", 1)])
    return Answer("scalar", [s])


def _group(s: str, i: int) -> tuple[str, int]:
    """The brace group (or single character) at s[i]: its text and the index after it."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        raise LatexError("missing argument")
    if s[i] != "{":
        return s[i], i + 1
    depth = 0
    for j in range(i, len(s)):
        depth += s[j] == "{"
        depth -= s[j] == "}"
        if depth == 0:
            return s[i + 1:j], j + 1
    raise LatexError("unbalanced braces")


def to_expr(s: str) -> str:
    """A LaTeX-ish scalar as a Python-syntax expression string for sympy's parser."""
    out, i = [], 0
    while i < len(s):
        two_args = _TWO_ARGUMENTS_RE.match(s, i)
        if two_args:
            num, i = _group(s, two_args.end())
            den, i = _group(s, i)
            if two_args.group().endswith("binom"):
                out.append(f"binomial(({to_expr(num)}),({to_expr(den)}))")
            else:
                out.append(f"(({to_expr(num)})/({to_expr(den)}))")
        elif s.startswith("\\sqrt", i):
            i += 5
            index = None
            if i < len(s) and s[i] == "[":
                close = s.find("]", i)
                if close < 0:
                    raise LatexError("unbalanced root index")
                index, i = s[i + 1:close], close + 1
            arg, i = _group(s, i)
            out.append(f"root(({to_expr(arg)}),({to_expr(index)}))" if index else f"sqrt({to_expr(arg)})")
        elif s[i] == "\\":
            m = _COMMAND_RE.match(s, i)
            if not m or m.group() not in _SIMPLE:
                raise LatexError(f"unsupported command {s[i:i + 12]!r}")
            out.append(f" {_SIMPLE[m.group()]} ")
            i = m.end()
        elif s[i] == "{":
            out.append("(")
            i += 1
        elif s[i] == "}":
            out.append(")")
            i += 1
        else:
            out.append(s[i])
            i += 1
    return "".join(out)
