"""A reply that, after its last answer, says it could not answer the question asked: the question reached it
incomplete, and it asks for the rest. Its letters then answer other questions (a few-shot prompt's worked
examples answered again), not the one asked (MiniMax-M2.5 on MMLU-Pro, tests/judges/real)."""
from __future__ import annotations

import re

# "question 6 is incomplete", "the last question appears to be cut off", "it seems truncated"
_INCOMPLETE_RE = re.compile(
    r"\b(?:question|it)\b[^\n.!?]{0,60}?\b(?:is|was|appears\s+to\s+be|seems(?:\s+to\s+be)?)[ \t]+"
    r"(?:incomplete|cut[ \t]+off|truncated|missing)\b", re.IGNORECASE)
# "Could you please provide the complete question", "please share the full question"
_ASKS_FOR_IT_RE = re.compile(
    r"\b(?:please|could[ \t]+you|can[ \t]+you)[ \t]+(?:please[ \t]+)?(?:provide|share|give|send)[ \t]+(?:me[ \t]+)?"
    r"(?:the|that)[ \t]+(?:complete|full|whole|rest[ \t]+of[ \t]+the|missing)[ \t]+(?:question|options|text)",
    re.IGNORECASE)


def asks_for_the_question(text: str, after: int) -> bool:
    """Whether the text after position `after` says the question was incomplete and asks for it (both)."""
    return _ASKS_FOR_IT_RE.search(text, after) is not None and _INCOMPLETE_RE.search(text, after) is not None
