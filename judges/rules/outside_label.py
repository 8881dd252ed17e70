"""An option label the question does not have, stated with an option's text: "**Option K:** <text of option J>"
with options A-J (an R1 distill on MMLU-Pro, tests/judges/real). The model named a choice that does not
exist; reading its text as option J would grade an answer it did not give, so it is no answer."""
from __future__ import annotations

import re

from judges.rules.extract import finditer_from_last

# "Option K:", "**Option K:**", "choice (K) -", "Option K." : a label with its text after it.
_LABELLED_OPTION_RE = re.compile(
    r"\b(?i:option|choice)[ \t]*[*_(\[]{0,4}(?P<letter>[A-Z])[*_)\]]{0,4}[ \t]*(?:[:.)]|[-–—][ \t])")


_WORDS = ("option", "Option", "OPTION", "choice", "Choice", "CHOICE")


def label_outside_choices(text: str, letters: set[str]) -> str | None:
    """The letter of the text's last labelled option ("Option K: ..."), when the choices lack it."""
    if not any(word in text for word in _WORDS):
        return None  # most texts, at C speed
    last = next(finditer_from_last(_LABELLED_OPTION_RE, text), None)  # read from the end: the last comes first
    if last is None or last.group("letter") in letters:
        return None
    return last.group("letter")
