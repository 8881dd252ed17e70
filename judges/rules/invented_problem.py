"""Base models given a few-shot prompt write past their answer: "The answer is 45\n\nProblem:\n..." opens a problem of
their own, worked and answered in turn (TheoremQA's 5-shot runs of InternLM2-20B, DBRX's "Q: ... A: ..." pairs,
tests/judges/real). What
follows that heading answers the invented problem, not the one asked, so both readers stop before it."""
from __future__ import annotations

import re
from itertools import islice

# A few-shot heading on its own line: "Problem:", "Question:", "Problem 2:", "Q:" (DBRX after its answer on AQuA,
# tests/judges/real). The GPQA reader looks for "Problem" and "Q" only: a "Question:" block there may be a worked
# example answered again, which it tells apart by its options.
_HEADING_RES = {words: re.compile(rf"\n[ \t]*(?:{words})[ \t]*\d{{0,3}}[ \t]*[:：]")
                for words in ("Problem|Question|Q", "Problem|Question", "Problem|Q", "Problem")}
_Q_HEADING_RE = re.compile(r"\n[ \t]*Q[ \t]*\d{0,3}[ \t]*[:：]")
# An answer statement close before the heading: "The answer is ...", "Answer: ...", a boxed value.
_ANSWER_RE = re.compile(r"(?i:answer)(?:[ \t]+is\b|[ \t*_]*[:：])|\\boxed")
ANSWER_REACH = 300  # how close before the heading the answer it follows must be
_MAX_HEADINGS = 64  # headings looked at: a megabyte of them costs a bounded amount


def before_invented_problem(text: str, headings: str = "Problem|Question|Q") -> str:
    """The text before the first problem heading that follows an answer (the whole text when there is none).

    A heading that opens the response, or that follows text with no answer just before it, is the problem asked
    being echoed or worked through, not a new one."""
    if "Problem" not in text and "Q" not in text:
        return text  # the common case, by two substring searches
    if headings.endswith("|Q"):
        first_answer = _ANSWER_RE.search(text)
        if first_answer and _Q_HEADING_RE.search(text, 0, first_answer.start()):
            # The reply itself opens "Q:" blocks before answering any: it re-solves the prompt's worked examples and
            # the question asked comes last (Llama-3.2-1B on BBH), so a "Q:" after an answer starts the next block.
            headings = headings.removesuffix("|Q")
    for heading in islice(_HEADING_RES[headings].finditer(text), _MAX_HEADINGS):
        p = heading.start()
        if _ANSWER_RE.search(text, max(0, p - ANSWER_REACH), p):
            return text[:p]
    return text
