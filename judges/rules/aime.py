"""AIME grading: the last committed final answer, read exactly as an integer 0-999."""
from __future__ import annotations

import re
from dataclasses import dataclass

from judges.rules.extract import FULLWIDTH, boxed_from_last, committed_text, lower_same_length, retracted_after
from judges.rules.numbers import MAX_ANSWER_CHARS, clean_answer, integer_value

PARSER_VERSION = "aime-v1"

# Boxed bodies that repeat the prompt's instruction rather than answer it.
_PLACEHOLDERS = {"", "answer", "your answer", "final answer", "your final answer", "the answer",
                 "...", "\\ldots", "\\dots", "\\cdots", "n", "x", "ans"}

# Anchors are found at the trigger words of one fast scan over the lower-cased text, then checked
# precisely at that position (a case-insensitive alternation scanned over 10k+ characters is slow).
_TRIGGER_RE = re.compile(r"answer|答案")
_AT_ANSWER_RE = re.compile(
    r"answer[ \t]*(?:\*\*|__)?[ \t]*(?:is[ \t]*)?[:：]"       # Answer: / **Final Answer:** / answer is:
    r"|answer\s+is\b(?:\s*:)?",                             # "the answer is", checked for its lead words below
    re.IGNORECASE,
)
_THE_BEFORE_RE = re.compile(r"\b(?:the|my|our)\s+(?:final\s+|correct\s+)?$", re.IGNORECASE)
_HEADING_PREFIX_RE = re.compile(r"[ \t#>*_]*final\s+", re.IGNORECASE)
_HEADING_RE = re.compile(r"answer[ \t*_]*$", re.IGNORECASE | re.MULTILINE)  # a "**Final Answer**" heading
_AT_ZH_RE = re.compile(r"答案\s*(?:是|为)?\s*[:：]?")                      # 答案：25 / 最终答案是 25
_LEAD_RE = re.compile(r"[\s*_:>#]*")
_BOXED_AHEAD_RE = re.compile(r"(?:\$\$?|\\\[|\\\()?\s*\\(?:boxed|fbox)(?![A-Za-z])")
# Where an answer given in prose ends: a sentence stop, a clause, a closing dollar.
_SPAN_END_RE = re.compile(
    r"\.(?!\d)|,\s|;|\s\(|\s[-–—]\s|\$|\\\)|\\\]"
    r"|\s(?:since|because|which|as|so|and|but|for|where|when|if|from|by)\b",
    re.IGNORECASE,
)
_DIGIT_RE = re.compile(r"\d")
_BARE_NUMBER_RE = re.compile(r"[\s*_$]*([-+−]?\d{1,3}(?:,\d{3})*(?:\.\d+)?|[-+−]?\d+(?:\.\d+)?)[\s*_$.]*")
# A prose answer starts like math: a number, sign, bracket, command, or a one-letter variable in an
# expression ("m + n = 25", "N \\equiv 42"); "an integer between 0 and 999" and "not 25" are prose.
_MATH_START_RE = re.compile(r"[-+−(\[{\\\d.]|[A-Za-z]\s*[-+=*/^_<>\\]")


@dataclass
class AimeReading:
    """What the parser found: the answer text (None if none), how, and its integer value."""

    text: str | None
    via: str | None
    value: int | None
    note: str | None = None


def _phrase_answer(text: str, end: int) -> str | None:
    """The answer written after an anchor, on the same line or the next non-empty one."""
    lead = _LEAD_RE.match(text, end)
    pos = lead.end() if lead else end
    limit = min(len(text), pos + MAX_ANSWER_CHARS + 50)
    if not _DIGIT_RE.search(text, pos, limit):
        return None  # "the answer is correct", "Answer: see above"
    if _BOXED_AHEAD_RE.match(text, pos):
        return None  # the boxed candidate covers it
    line_end = text.find("\n", pos, limit)
    line = text[pos:line_end if line_end >= 0 else limit]
    if line.startswith("$$") or line.startswith("\\["):
        inner = line[2:]
        close = inner.find(line[:2] if line[0] == "$" else "\\]")
        span = inner[:close] if close >= 0 else inner
    elif line.startswith("$") or line.startswith("\\("):
        inner = line[1:] if line[0] == "$" else line[2:]
        close = inner.find("$" if line[0] == "$" else "\\)")
        span = inner[:close] if close >= 0 else inner
    else:
        stop = _SPAN_END_RE.search(line)
        span = line[:stop.start()] if stop else line
    span = span.strip().strip("*_").strip()
    if not span or not _DIGIT_RE.search(span) or not _MATH_START_RE.match(span):
        return None
    return span


def _anchor_end(text: str, low: str, p: int) -> int | None:
    """Where the answer after the anchor at trigger position p begins, or None if p is no anchor."""
    if low.startswith("答案", p):
        return _AT_ZH_RE.match(text, p).end()
    if p > 0 and (low[p - 1].isascii() and low[p - 1].isalnum() or low[p - 1] == "_"):
        return None  # inside a longer word
    m = _AT_ANSWER_RE.match(text, p)
    if m and (m.group().endswith((":", "：")) or _THE_BEFORE_RE.search(text, max(0, p - 30), p)):
        return m.end()
    line_start = text.rfind("\n", 0, p) + 1
    if _HEADING_PREFIX_RE.fullmatch(text, line_start, p):
        h = _HEADING_RE.match(text, p)
        if h:
            return h.end()
    return None


def read_aime(response: str) -> AimeReading:
    """Find the last committed final answer in a response and read its integer value."""
    text, think_open = committed_text(response)
    if not text.isascii():
        text = text.translate(FULLWIDTH)
    best: tuple[int, int, str, str] | None = None  # (start, end, answer text, via)
    cut_off: int | None = None
    for box in boxed_from_last(text):
        if box.body is None:
            cut_off = box.start  # every earlier box comes before it, so none can be the answer
            break
        body = box.body.strip()
        if body.lower().strip("$ ") not in _PLACEHOLDERS:
            best = (box.start, box.end, body, "boxed")
            break
    # Only the last anchor with a readable answer after the box can win, so walk them backwards.
    low = lower_same_length(text)
    for t in reversed(list(_TRIGGER_RE.finditer(low, best[0] if best else 0))):
        end = _anchor_end(text, low, t.start())
        span = _phrase_answer(text, end) if end is not None else None
        if span is not None:
            best = (t.start(), end + len(span), span, "phrase")
            break
    if cut_off is not None and (best is None or cut_off > best[0]):
        # The response stops inside its last \boxed{: the answer it was writing is unknown.
        return AimeReading(None, None, None, "last boxed answer not closed")
    if best is None:
        bare = _BARE_NUMBER_RE.fullmatch(text)
        if bare:  # the whole committed text is one number ("25", "**025**", "$25$.")
            return AimeReading(bare.group(1), "bare", integer_value(bare.group(1)))
        return AimeReading(None, None, None, "think block not closed" if think_open else None)
    start, end, answer, via = best
    if retracted_after(text, end):
        return AimeReading(None, None, None, f"answer {answer!r} retracted afterwards")
    return AimeReading(answer, via, integer_value(answer))


def parse_target(target: str) -> int | None:
    """The gold answer as an integer ("025" is 25); None if it is not one."""
    return integer_value(str(target))


def normalised(reading: AimeReading) -> str | None:
    """The extracted answer as recorded: the integer when there is one, else the cleaned text."""
    if reading.text is None:
        return None
    if reading.value is not None:
        return str(reading.value)
    return clean_answer(reading.text) or reading.text
