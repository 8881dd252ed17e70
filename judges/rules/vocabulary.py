"""The words the rules readers look for, each list written once; readers build their patterns from these."""
from __future__ import annotations

import re
from collections.abc import Iterable

# "answer" in the languages models answer in; every anchor, statement and commitment rule uses this list.
# Cyrillic is searched as written (lower_same_length lower-cases ASCII only), so Russian "Ответ:" is listed in the
# two cases it opens a line or a sentence with.
ANSWER_WORDS = ("answer", "réponse", "reponse", "antwort", "respuesta", "risposta", "resposta", "ответ", "Ответ")
# CJK answer markers and the choice marker "选" (which counts only after a word that makes it a choice).
CJK_ANSWER_WORDS = ("答案", "答え", "正解", "回答")
CHOICE_WORDS = ("option", "choice")
# LaTeX commands that wrap text without changing it (\text{C}, \mathrm{cm}).
TEXT_WRAPPERS = ("text", "textbf", "textrm", "textit", "mathrm", "mathbf", "mathit", "mbox", "operatorname", "emph")


def alternation(words: Iterable[str]) -> str:
    """A non-capturing regex alternation of the words, longest first so a prefix never shadows a word."""
    return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"


ANSWER_RE_PART = alternation(ANSWER_WORDS)
WRAPPER_RE_PART = alternation(TEXT_WRAPPERS)
