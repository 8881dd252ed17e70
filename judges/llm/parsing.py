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


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    candidates = [stripped]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _key_lines(text: str) -> dict[str, str]:
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        match = _KEY_LINE.match(line)
        if match:
            current = match.group(1).lower()
            found[current] = [match.group(2)]
        elif current is not None:
            found[current].append(line)  # reasoning often runs over several lines
    return {k: "\n".join(v).strip().strip("*").strip() for k, v in found.items()}


def parse_reply(text: str | None) -> ParsedVerdict:
    """A verdict from the judge's reply; ParseError when the reply lacks the verdict or the answer."""
    if not text or not text.strip():
        raise ParseError("empty judge reply")
    text = text.rsplit("</think>", 1)[-1]  # a reasoning judge may think aloud before its verdict
    if not text.strip():
        raise ParseError("judge reply holds only thinking")
    fields = _json_object(text)
    if fields is None or not {"correct", "extracted_final_answer"} <= fields.keys():
        fields = _key_lines(text)
    missing = [k for k in ("extracted_final_answer", "correct") if k not in fields]
    if missing:
        raise ParseError(f"judge reply lacks {', '.join(missing)}: {text[:120]!r}")
    return ParsedVerdict(
        extracted=_extracted(fields["extracted_final_answer"]),
        reasoning=str(fields.get("reasoning") or "").strip(),
        correct=parse_correct(fields["correct"]),
        confidence=parse_confidence(fields.get("confidence")),
    )
