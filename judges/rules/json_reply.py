"""The answer field of a reply written as a JSON object, as prompts that ask for one get it back.

Gemini 2.0 Flash-Lite asked for `{"response": "A", "reasoning": "..."}` on MMLU-Pro (tests/judges/real) puts its letter in
the field and its working, which may name other letters, in the reasoning string. The field is the committed answer when
the object closes the reply (a code fence may close around it); working written before the object does not change that.
"""
from __future__ import annotations

import re

# The keys prompts name for the answer, English and Spanish; the value a short string.
_FIELD_RE = re.compile(r'"(?:response|answer|final_answer|choice|respuesta)"[ \t]*:[ \t]*"(?P<value>(?:[^"\\\n]|\\.){0,80})"',
                       re.IGNORECASE)
_OPENS_WITH_FIELD_RE = re.compile(r"(?:```(?:json)?[ \t]*\n\s*)?\{\s*" + _FIELD_RE.pattern, re.IGNORECASE)
_CLOSES_RE = re.compile(r"[\s`]*")  # what may follow the object's closing brace
_SEARCH_CHARS = 20_000  # the field is looked for this far from the end: a megabyte of text costs a bounded search


def answer_field(text: str) -> str | None:
    """The value of the last answer field of the JSON object that closes the text, or of the field that opens the reply
    (an object whose reasoning string runs on and never closes), or None when there is none."""
    opening = _OPENS_WITH_FIELD_RE.match(text, len(text) - len(text.lstrip()))
    if opening:
        return opening.group("value").replace('\\"', '"').strip()
    end = text.rfind("}")
    if end < 0 or not _CLOSES_RE.fullmatch(text, end + 1):
        return None
    found = None
    for found in _FIELD_RE.finditer(text, max(0, end - _SEARCH_CHARS), end):
        pass
    if found is None or text.rfind("{", 0, found.start()) < 0:
        return None
    return found.group("value").replace('\\"', '"').strip()
