"""GPQA option texts: compare what a response quotes with the four options of its sample."""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from judges.rules.normalise import latex_symbols, unicode_spaces
from judges.rules.vocabulary import WRAPPER_RE_PART

# LaTeX and markdown that decorate an option without changing it.
_DECOR_RE = re.compile(r"\\" + WRAPPER_RE_PART + r"\b|\\[,;:! ]|[$*_`~{}]|\\[()\[\]]")
# Multiplication signs written in several ways ("3.9 x 10^5", "3.9 \times 10^5", "3.9*10^5").
_TIMES_RE = re.compile(r"\\times\b|\\cdot\b|[×·⋅]")
# A degree sign in any of its spellings ("40°", "40^\\circ", "40^{\\circ}", "40\\degree"): options write it or leave it out.
DEGREE_RE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ\b|\\degree\b|°")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ARROW_RE = re.compile(r"\\(?:rightarrow|to|longrightarrow)\b|→")
# Tokens: a run of letters, a run of digits, or one other visible character; spaces only separate.
_TOKEN_RE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]")
# A prompt line as tasks/gpqa/prompt.jinja renders it: "C) option text".
_PROMPT_CHOICE_RE = re.compile(r"^([A-Z])\) (.+)$", re.MULTILINE)
# A hyphen joining two words ("PDE-Refiner", "no-reaction") is written or left out at will; one next to a
# digit ("but-2-ene", "-3") carries meaning and stays.
_WORD_HYPHEN_RE = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
# After a value, what makes it an operand of a calculation ("42.5 J / 5 = ..."), not the value stated.
_OPERATORS = frozenset(("/", "*", "^", "÷", "x", "+", "-"))
# Longest span of a response compared with the options; a final statement is short.
MAX_SEGMENT_CHARS = 600


def tokens(text: str) -> tuple[str, ...]:
    """Case-, whitespace- and decoration-insensitive tokens of an option or a quoted answer."""
    return _tokens(text[:MAX_SEGMENT_CHARS])


# A read compares every option with several segments, and a run's samples share their options: without the
# cache a ten-option item re-tokenised its options ~150 times per response. Keys are at most
# MAX_SEGMENT_CHARS long, so the cache stays a few MB.
@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    text = _THOUSANDS_RE.sub("", text.replace("\\$", "$"))  # "60,000" is 60000; "\\$742.97" is $742.97
    text = latex_symbols(_ARROW_RE.sub(" -> ", _TIMES_RE.sub(" x ", DEGREE_RE.sub(" ", text))))
    text = _DECOR_RE.sub(" ", text)
    text = _WORD_HYPHEN_RE.sub(" ", unicode_spaces(text).replace("−", "-").replace("–", "-"))
    return tuple(_TOKEN_RE.findall(text.lower()))


def strip_tail(seg: tuple[str, ...]) -> tuple[str, ...]:
    while seg and seg[-1] in (".", ",", ";", ":", "!", ")", "]"):
        seg = seg[:-1]
    return seg


def _find(seg: tuple[str, ...], opt: tuple[str, ...]) -> int:
    """Start of the first contiguous occurrence of opt in seg that is not an operand of a calculation, or -1."""
    n = len(opt)
    for i in range(len(seg) - n + 1):
        if seg[i:i + n] == opt and not _operand(seg, i + n):
            return i
    return -1


def _operand(seg: tuple[str, ...], end: int) -> bool:
    """Whether the value ending at end is followed by an operator and another term ("42.5 J / 5")."""
    nxt = seg[end:end + 2]
    return len(nxt) == 2 and nxt[0] in _OPERATORS and (nxt[1][0].isdigit() or nxt[1] in ("(", "\\"))


def option_starting(segment: str, options: Sequence[str]) -> int | None:
    """The option whose whole text begins the segment ("D. 4 peaks" quotes option "4 peaks"); the longest wins."""
    seg = tokens(segment)
    best: tuple[int, int] | None = None
    for i, opt in enumerate(options):
        t = strip_tail(tokens(opt))
        if t and seg[:len(t)] == t and (best is None or len(t) > best[1]):
            best = (i, len(t))
    return best[0] if best else None


def quotes_own_option(segment: str, option: str) -> bool:
    """Whether a letter's quoted text agrees with its own option (whole, or an abbreviation of it)."""
    seg, opt = strip_tail(tokens(segment)), strip_tail(tokens(option))
    if not seg or not opt:
        return True
    return seg[:len(opt)] == opt or opt[:len(seg)] == seg


def options_named(segment: str, options: Sequence[str]) -> set[int]:
    """The options whose text the segment states.

    Options contained in a longer matched option ("benzene" in "benzene and toluene") do not count
    separately; a short option (one or two tokens, such as "4") must open the segment, so a number
    inside a sentence is not read as that option.
    """
    seg = strip_tail(tokens(segment))
    spans: list[tuple[int, int, int]] = []  # (start, end, option index)
    for i, opt in enumerate(options):
        t = strip_tail(tokens(opt))
        if not t:
            continue
        short = len(t) <= 2 and sum(len(x) for x in t) <= 4
        if short:
            if seg == t or (seg[:len(t)] == t and len(seg) <= len(t) + 3 and not _operand(seg, len(t))):
                spans.append((0, len(t), i))
            continue
        at = _find(seg, t)
        if at >= 0:
            spans.append((at, at + len(t), i))
    return {i for s, e, i in spans
            if not any(o0 <= s and e <= o1 and o1 - o0 > e - s for o0, o1, _ in spans)}


def options_equal(value: str, options: Sequence[str]) -> set[int]:
    """The options whose whole text is the value (a boxed answer): tokens compared whole, no option found
    inside a longer value."""
    seg = strip_tail(tokens(value))
    if not seg:
        return set()
    named = {i for i, opt in enumerate(options) if strip_tail(tokens(opt)) == seg}
    unit = _shared_unit(tuple(options))
    if named or not unit:
        return named
    # A unit every option carries ("$3 \\mathrm{~m}$") tells none apart: "\\boxed{3}" names the option "3 m".
    return {i for i, opt in enumerate(options) if strip_tail(tokens(opt))[:-len(unit)] == seg}


@lru_cache(maxsize=1024)
def _shared_unit(options: tuple[str, ...]) -> tuple[str, ...]:
    """The words every option ends with after a number ("m" of "1 m", "2 m", ...), or () when they do not share one."""
    ends = [strip_tail(tokens(opt)) for opt in options]
    unit: tuple[str, ...] = ()
    while len(options) > 1 and all(len(e) > len(unit) + 1 for e in ends):
        word = ends[0][-len(unit) - 1]
        if not word.isalpha() or any(e[-len(unit) - 1] != word for e in ends):
            break
        unit = (word, *unit)
    return unit if unit and all(e[-len(unit) - 1][0].isdigit() for e in ends) else ()


def option_in_text(segment: str, options: Sequence[str]) -> int | None:
    """The one option whose text the segment states, or None when none or several do (a short option inside
    the sentence counts against the other: "the wolf, and the frogs would increase" names two)."""
    named = options_named(segment, options)
    if len(named) != 1:
        return None
    found = named.pop()
    seg = strip_tail(tokens(segment))
    mine = strip_tail(tokens(options[found]))
    for i, option in enumerate(options):
        t = strip_tail(tokens(option))
        if i != found and t and t[0].isalpha() and _find(seg, t) >= 0 and _find(mine, t) < 0:
            return None
    return found


def options_for_record(meta: dict[str, Any] | None, messages: Sequence[dict[str, Any]] | None,
                       letters: Sequence[str]) -> list[str] | None:
    """The sample's option texts in letter order: from meta["choices"], else read back from the prompt.

    Records written before the choices were stored still carry the rendered prompt, whose
    "A) ..." lines give the same texts.
    """
    choices = (meta or {}).get("choices")
    if isinstance(choices, list) and len(choices) == len(letters) and all(isinstance(c, str) for c in choices):
        return list(choices)
    for message in reversed(list(messages or [])):
        if not isinstance(message, dict) or message.get("role") != "user" or not isinstance(message.get("content"), str):
            continue
        content = message["content"]
        found = dict((m.group(1), m.group(2).strip()) for m in _PROMPT_CHOICE_RE.finditer(content))
        if all(letter in found for letter in letters):
            return [found[letter] for letter in letters]
    return None
