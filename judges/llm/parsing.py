"""Read a judge reply, JSON (structured output) or the four-line plain-text form, into a verdict."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

KEYS = ("extracted_final_answer", "reasoning", "correct", "confidence")
_KEY_LINE = re.compile(r"^[\s*#>-]*(extracted_final_answer|reasoning|correct|confidence)[\s*]*:\s*(.*)$",
                       re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?|[-+]?\.\d+")
_NO_ANSWER = {"", "none", "null", "n/a", "no answer", "no final answer"}


class ParseError(ValueError):
    """A judge reply that does not carry a usable verdict."""


@dataclass
class ParsedVerdict:
    extracted: str | None  # None when the judge says the response has no final answer
    reasoning: str
    correct: bool
    confidence: int
    stated: str = ""  # extracted_final_answer as the judge wrote it ("None" included)


def parse_confidence(value: Any) -> int:
    """0-100 from 85, "85", "85%", 0.85, "0.85" or 1.0; absent or unreadable means 100."""
    if value is None or isinstance(value, bool):
        return 100
    if isinstance(value, (int, float)):
        number, fraction = float(value), isinstance(value, float) and 0 <= value <= 1
    else:
        text = str(value).strip()
        match = _NUMBER.search(text)
        if not match:
            return 100
        number = float(match.group())
        # "0.85" is a fraction, "1" or "85" are percents; a percent sign always means percent
        fraction = "%" not in text and "." in match.group() and 0 <= number <= 1
    if not math.isfinite(number):
        return 100
    if fraction:
        number *= 100
    return int(min(100, max(0, round(number))))


def parse_correct(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    first = re.match(r"[\s*\"'`]*([a-z]+)", str(value).lower())
    word = first.group(1) if first else ""
    if word in ("yes", "true", "correct"):
        return True
    if word in ("no", "false", "incorrect"):
        return False
    raise ParseError(f"'correct' must be yes or no, got {str(value)[:40]!r}")


def _extracted(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return None if text.strip("*`\"' .").lower() in _NO_ANSWER else text


_REQUIRED = {"extracted_final_answer", "correct"}
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def _whole_json(text: str) -> dict[str, Any] | None:
    """The reply as one JSON object (structured output), optionally inside a code fence."""
    stripped = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and _REQUIRED <= value.keys() else None


def _first_key_line_verdict(text: str, opener: str | None = "extracted_final_answer") -> dict[str, str] | None:
    """The first complete four-line verdict. It opens at an `opener` key line (the prompt's first key;
    None: any key), collects key lines until extracted_final_answer and correct are both seen, then only
    keys not seen yet; a repeated key ends it, so a later verdict or quoted text never overrides it."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        match = _KEY_LINE.match(line)
        complete = _REQUIRED <= found.keys()
        if match:
            key = match.group(1).lower()
            if key in found and complete:
                break
            if key in found or (not found and opener and key != opener):
                found = {}  # a fragment that never completed (e.g. quoted from the response): start again
                if opener and key != opener:
                    current = None
                    continue
            current = key
            found[key] = [match.group(2)]
        elif current is not None and not complete:
            found[current].append(line)  # reasoning often runs over several lines
    if not _REQUIRED <= found.keys():
        return None if opener is None else _first_key_line_verdict(text, None)
    return {k: "\n".join(v).strip().strip("*").strip() for k, v in found.items()}


def _first_json_verdict(text: str) -> dict[str, Any] | None:
    """A JSON verdict after some prose: a fenced ```json block first, else the first object with the keys."""
    decoder = json.JSONDecoder()
    starts = [m.start(1) for m in _FENCE.finditer(text)] + [i for i, ch in enumerate(text) if ch == "{"]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and _REQUIRED <= value.keys():
            return value
    return None


def parse_reply(text: str | None) -> ParsedVerdict:
    """A verdict from the judge's reply; ParseError when the reply lacks the verdict or the answer.

    A reply that is one JSON object is read as such. Otherwise the judge's own four-line verdict is read,
    the first complete one winning, so text the judge quotes after it (or a JSON object inside the quoted
    response) cannot override it; a JSON verdict after some prose is the last resort.
    """
    if not text or not text.strip():
        raise ParseError("empty judge reply")
    text = text.rsplit("</think>", 1)[-1]  # a reasoning judge may think aloud before its verdict
    if not text.strip():
        raise ParseError("judge reply holds only thinking")
    fields = _whole_json(text) or _first_key_line_verdict(text) or _first_json_verdict(text)
    if fields is None:
        raise ParseError(f"judge reply lacks a verdict (extracted_final_answer and correct): {text[:120]!r}")
    stated = fields["extracted_final_answer"]
    return ParsedVerdict(
        extracted=_extracted(stated),
        reasoning=str(fields.get("reasoning") or "").strip(),
        correct=parse_correct(fields["correct"]),
        confidence=parse_confidence(fields.get("confidence")),
        stated="" if stated is None else str(stated).strip(),
    )
