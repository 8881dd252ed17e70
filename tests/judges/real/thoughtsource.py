"""The fourteenth batch: zero-shot chain-of-thought runs committed to OpenBioLink/ThoughtSource (see SOURCES.md).

ThoughtSource (MIT) asked several models the same questions with the same prompt: the question, its options as
"A) <text>" lines, then either nothing or a reasoning trigger ("Answer: Let's think step by step." or "Answer: Let's work
this out in a step by step way to be sure we have the right answer."). Nothing told the models how to state the answer,
so they state it in their own way: a bare letter, "B) <text>", "the answer is B", the option's words alone, or not at
all. A second call then asked for the letter ("Therefore, among A through E, the answer is"); its reply is the hint,
never the label. Only the multiple-choice sets whose licence allows it are read: CommonsenseQA (MIT), MedQA-USMLE
(MIT), MedMCQA (MIT) and OpenBookQA (Apache-2.0); StrategyQA (true/false) and WorldTree (AI2 Mercury licence) are not.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import Candidate, _git, capped

REPO = "OpenBioLink/ThoughtSource"
COMMIT = "760b2c7f536759fb1b487d2cc5d789236fcba737"
PREFIX = "tsource-mc"
LICENSE = "MIT (repository); CommonsenseQA MIT, MedQA MIT, MedMCQA MIT, OpenBookQA Apache-2.0"
DATASETS = ("commonsense_qa", "med_qa", "medmc_qa", "open_book_qa")
_DIR = "notebooks/internal_documentation/paper_2/"
# One file per model, each holding that model's runs (one run per trigger); the files overlap in questions, never in
# (model, trigger), so no response is read twice.
FILES = {
    _DIR + "thoughtsource_67.json": ("gpt-3.5-turbo", "GPT-3.5-turbo", "GPT"),
    _DIR + "thoughtsource_67_openai_chat_gpt-4_None_None-zhou-01.json": ("gpt-4", "GPT-4", "GPT"),
    _DIR + "thoughtsource_67_huggingface_endpoint_flan-T5-xxl_None_None-kojima-01-zhou-01.json":
        ("flan-T5-xxl", "Flan-T5-XXL", "Flan-T5"),
    _DIR + "thoughtsource_167_cohere_command-xlarge-nightly_None_None.json":
        ("command-xlarge-nightly", "Cohere command-xlarge-nightly", "Cohere Command"),
}
TRIGGERS = {None: "none", "kojima-01": "kojima", "zhou-01": "zhou"}
ASKED = {
    "none": "the question and its options (\"A) <text>\" lines), no instruction on the answer's form",
    "kojima": "the question and its options, then \"Answer: Let's think step by step.\"",
    "zhou": "the question and its options, then \"Answer: Let's work this out in a step by step way to be sure we "
            "have the right answer.\"",
}


def candidates(repo: Path) -> Iterator[Candidate]:
    for path, (name_in_file, model, family) in FILES.items():
        data = json.loads(_git(repo, "show", f"{COMMIT}:{path}"))
        for dataset in DATASETS:
            for split, items in data.get(dataset, {}).items():
                for index, item in enumerate(items):
                    yield from _item_candidates(item, dataset, split, index, path, name_in_file, model, family)


def _item_candidates(item: dict[str, Any], dataset: str, split: str, index: int, path: str, name_in_file: str,
                     model: str, family: str) -> Iterator[Candidate]:
    choices = [str(c).strip() for c in item["choices"]]
    seen = set()
    for k, gen in enumerate(item.get("generated_cot") or []):
        if f"'name': '{name_in_file}'" not in str(gen.get("model")) or gen.get("cot_trigger") not in TRIGGERS:
            continue  # another model's reply, or a critique the authors added by hand
        trigger = TRIGGERS[gen.get("cot_trigger")]
        if trigger in seen:
            continue  # a run repeated on the same question: the first is kept
        seen.add(trigger)
        text, dropped = capped(str(gen.get("cot") or ""))
        answers = gen.get("answers") or [{}]
        yield Candidate(
            id=f"{PREFIX}:{model}:{trigger}:{dataset}:{item['id']}", shape="gpqa", response=text, model=model,
            family=family, reasoning_model=False,
            source={"repo": REPO, "path": path, "member": f"{dataset}/{split}", "commit": COMMIT, "index": index,
                    "field": f"generated_cot[{k}]", "license": LICENSE},
            letters=[chr(65 + j) for j in range(len(choices))], choices=choices,
            hint=extracted_letter(str(answers[0].get("answer") or "")), asked_format=ASKED[trigger],
            extra={"dropped_chars": dropped, "subset": trigger, "option_texts": choices})


def extracted_letter(answer: str) -> str | None:
    """The letter the second call opened with ("B.", " B) text", "(B)"), or None."""
    m = re.match(r"\s*\(?([A-E])(?:[.):,]|\s|$)", answer)
    return m.group(1) if m else None


# --- plain labels: only responses whose answer cannot be read two ways ---

_BARE = re.compile(r"\s*\(?([A-E])\)?[.:]?\s*")
_LETTER_WITH_TEXT = re.compile(r"\s*\(?([A-E])\)\s*(.+?)\s*")
# "the answer is B", "Answer: B) text", "The final answer: B.", "the correct answer is (B)".
_STATEMENT = re.compile(r"(?i:answer(?: is)?:?)\s*\**\s*\(?([A-E])\)?(?![A-Za-z0-9'’])")
# Any option letter named as one: "B)", "(B)", "option B", "choice B".
_LETTER_NAMED = re.compile(r"\(([A-E])\)|(?<![A-Za-z])([A-E])\)|\b(?:[Oo]ption|[Cc]hoice)\s+\(?([A-E])\b")
_TWO_LETTERS = re.compile(r"(?i:answer(?: is)?:?)\s*\(?[A-E]\)?[^.\n]{0,40}?\s(?:and|or|&)\s+\(?[A-E]\)")


def _squeeze(text: str) -> str:
    return re.sub(r"[^\w]", "", text.lower())


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the reply is the letter alone, the letter with its own option's words alone, or holds answer
    statements that all name one letter with no other option letter named after the last; always equal to the second
    call's letter. Anything else is read by a person."""
    text = c.response.strip()
    said = None
    if bare := _BARE.fullmatch(text):
        said = bare.group(1)
    elif (own := _LETTER_WITH_TEXT.fullmatch(text)) and "\n" not in text:
        k = ord(own.group(1)) - 65
        if k < len(c.choices or []) and _squeeze(own.group(2)) == _squeeze(c.choices[k]):
            said = own.group(1)
    else:
        statements = list(_STATEMENT.finditer(text))
        letters = {m.group(1) for m in statements}
        if len(letters) == 1:
            tail = text[statements[-1].end():]
            later = {x for m in _LETTER_NAMED.finditer(tail) for x in m.groups() if x}
            if later <= letters:
                said = letters.pop()
    if said and said == c.hint and said in (c.letters or []):
        return "plain", said, None
    return "hard", None, None


def needs_person(c: Candidate) -> bool:
    """Checked after sampling (the sample and its split stay as drawn): two letters in one statement, or a statement
    giving its letter with another option's words."""
    if _TWO_LETTERS.search(c.response):
        return True
    texts = [_squeeze(t) for t in c.choices or []]
    for m in re.finditer(r"(?i:answer(?: is)?:?)\s*\**\(?([A-E])\)?[.:)]?\**\s+([^\n]{4,60})", c.response):
        k, head = ord(m.group(1)) - 65, _squeeze(m.group(2))[:12]
        if len(head) < 4 or (k < len(texts) and texts[k].startswith(head[:len(texts[k])][:12])):
            continue
        if any(j != k and len(t) >= 4 and head.startswith(t[:12]) for j, t in enumerate(texts)):
            return True
    return False
