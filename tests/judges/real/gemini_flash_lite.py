"""The twenty-fourth batch: Gemini 2.0 Flash-Lite on MMLU-Pro, committed in nicokossacoff/mmlu-pro-validation.

The repository (MIT) is a course report that evaluates Gemini 2.0 Flash-Lite (its `informe.md` names the model) on 500
MMLU-Pro test questions (MIT), balanced by category, twice: zero-shot (an English prompt: "You are an expert in
<category>", a threat that a wrong answer harms the model's family, "answer and explain your reasoning step-by-step",
and the answer as a JSON object `{"response": "A", "reasoning": "..."}`), and few-shot with chain of thought (a Spanish
prompt with five worked MMLU-Pro validation examples of the category, each closing "The answer is (X)." and
"Respuesta: X", then the question and the same JSON request in Spanish). Each parquet row keeps the prompt
(`prompt_utilizado`), the reply (`respuesta_llm`), the repository's extraction (`respuesta_extraida`, the hint, never
the label) and the reference. The option texts are read from the prompt's own option list (the question asked, not the
worked examples).
"""
from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import Candidate, _git, capped

REPO = "nicokossacoff/mmlu-pro-validation"
COMMIT = "4ce8454573407d8a44f0d5192bdecbb5c487a3a6"  # the commit that adds both files; none changes them later
PREFIX = "gemflash-mmlupro"
LICENSE = "MIT (repository); MMLU-Pro data MIT"
MODEL = "Gemini-2.0-Flash-Lite"
FILES = {"data/resultados_zero_shot.parquet": "zero-shot", "data/resultados_few_shot.parquet": "few-shot-cot"}
ASKED = {"zero-shot": 'zero-shot, "answer and explain your reasoning step-by-step", the result as JSON '
                      '{"response": "A", "reasoning": "..."}',
         "few-shot-cot": 'five worked examples ending "The answer is (X)." / "Respuesta: X" (Spanish prompt), then the '
                         'result as JSON {"response": "A", "reasoning": "..."}'}
# Per stratum (one per prompt): plain responses and responses a person reads.
PLAIN = 300
HARD = 25

# The last option list of the prompt is the question asked (the worked examples come before it).
_OPTIONS_HEAD = re.compile(r"(?:Options|Opciones):\s*\n")
_OPTION_LINE = re.compile(r"\s*([A-J])\.\s?(.*)")


def _options(prompt: str) -> tuple[list[str], list[str]]:
    heads = list(_OPTIONS_HEAD.finditer(prompt))
    letters, texts = [], []
    for line in prompt[heads[-1].end():].splitlines() if heads else []:
        m = _OPTION_LINE.fullmatch(line)
        if not m or m.group(1) != chr(65 + len(letters)):
            break
        letters.append(m.group(1))
        texts.append(m.group(2).strip())
    return letters, texts


def candidates(repo: Path) -> Iterator[Candidate]:
    import pandas as pd  # a project dependency; imported here so the other batches build without reading parquet

    for path, prompt_kind in FILES.items():
        table = pd.read_parquet(io.BytesIO(_git(repo, "show", f"{COMMIT}:{path}")))
        for i, row in enumerate(table.itertuples(index=False)):
            letters, texts = _options(str(row.prompt_utilizado))
            text, dropped = capped(str(row.respuesta_llm or ""))
            extracted = row.respuesta_extraida if isinstance(row.respuesta_extraida, str) else None
            yield Candidate(
                id=f"{PREFIX}:{prompt_kind}:{i}", shape="gpqa", response=text, model=MODEL, family="Gemini",
                reasoning_model=False,
                source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "respuesta_llm",
                        "license": LICENSE},
                letters=letters, choices=texts, hint=extracted, asked_format=ASKED[prompt_kind],
                extra={"dropped_chars": dropped, "subset": prompt_kind})


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def _json_reply(text: str) -> dict[str, Any] | None:
    """The reply as the JSON object asked for (inside a ```json fence or bare), or None."""
    m = _FENCE.fullmatch(text)
    try:
        value = json.loads(m.group(1) if m else text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# The object asked for, opening the reply, when the rest of it is not valid JSON (a LaTeX backslash in the reasoning, a
# reply cut off): its first field "response", with no second "response" anywhere.
_OPENING_FIELD = re.compile(r'\s*(?:```(?:json)?\s*\n)?\s*\{\s*"response"\s*:\s*"([^"\n]*)"')


def _opening_field(text: str) -> str | None:
    m = _OPENING_FIELD.match(text)
    return m.group(1) if m and text.count('"response"') == 1 else None


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the whole reply is one JSON object (or, not valid JSON, opens as one) whose "response" is a single
    option letter of the question, equal to the repository's extraction; anything else (prose before the JSON, several
    letters, words, a letter the question lacks) is read by a person."""
    reply = _json_reply(c.response)
    said = reply.get("response") if reply else _opening_field(c.response)
    if not isinstance(said, str) or said.strip() not in (c.letters or []) or said.strip() != c.hint:
        return "hard", None, None
    return "plain", said.strip(), None


# An answer statement in the reasoning: "the answer is (C)", "the correct answer is C", "la respuesta es C".
_STATEMENT = re.compile(r"(?i:answer|respuesta)(?i: correcta)? (?i:is|es):?\s*\**\(?([A-J])\)?(?![A-Za-z0-9])")


def needs_person(c: Candidate) -> bool:
    """Checked after sampling (the sample stays as drawn): a reasoning whose answer statement names another letter than
    the "response" field."""
    reply = _json_reply(c.response)
    said = str(reply.get("response", "")).strip() if reply else (_opening_field(c.response) or "").strip()
    reasoning = reply.get("reasoning") if reply else c.response  # not valid JSON: the whole text
    return isinstance(reasoning, str) and any(m.group(1) != said for m in _STATEMENT.finditer(reasoning))
