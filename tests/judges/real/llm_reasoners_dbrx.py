"""The twenty-second batch: DBRX's committed chain-of-thought answers in maitrix-org/llm-reasoners (see SOURCES.md).

llm-reasoners (Apache-2.0) committed, for its AutoRace reasoning-chain evaluation, the generations of DBRX (Databricks'
model, the first of the README's model list) on the AQuA test set (254 questions, options A-E) and on the GSM8K test set
(1,319 problems): `autorace/data/aqua_dbrx.jsonl` and `autorace/data/gsm8k_dbrx.jsonl`, one line per question in dataset
order, `metadata_generation` the response and `gt_answer` the reference. The prompt is the repository's few-shot
chain-of-thought prompt ("Q: ... A: ... The answer is X."); the model often goes on writing made-up "Q:"/"A:" pairs after
its answer, and many responses lose their first character ("he answer is B."). The files were deleted by the next
commit ("cleaned AutoRace"), so they are read at its parent. The AQuA lines keep the question without its options; the
options come from the repository's own copy of the AQuA test set (`examples/CoT/AQuA/data/test.json`, same order, the
question text checked to be the same). The source has no extraction of its own in these files; the hint is what the
repository's CoT examples would extract (the last "The answer is" and the option letter or number after it), a hint for
labelling only, never the label. AQuA is Apache-2.0, GSM8K MIT.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import Candidate, _git, capped

REPO = "maitrix-org/llm-reasoners"
# The parent of "cleaned AutoRace" (b0e10b83, 2024-05-28), which deletes the DBRX files; HEAD no longer has them.
COMMIT = "ca821a91db5b2ccb94aebbe5058ac052cc8bdbd1"
PREFIX_AQUA = "llmr-dbrx-aqua"
PREFIX_GSM = "llmr-dbrx-gsm"
PREFIXES = (PREFIX_AQUA, PREFIX_GSM)
SEED = "real-output-corpus-v22"  # the batch's own sampling seed; the split keeps the corpus's hash rule
LICENSE = "Apache-2.0 (repository); AQuA Apache-2.0, GSM8K MIT"
MODEL, FAMILY = "DBRX", "DBRX"
AQUA_FILE = "autorace/data/aqua_dbrx.jsonl"
AQUA_OPTIONS_FILE = "examples/CoT/AQuA/data/test.json"
GSM_FILE = "autorace/data/gsm8k_dbrx.jsonl"
ASKED = ('the repository\'s few-shot chain-of-thought prompt: worked "Q: ... A: ..." examples, each answer ending '
         '"The answer is X." (an option letter for AQuA, a number for GSM8K)')
LETTERS = ["A", "B", "C", "D", "E"]
# Per file (one stratum each): plainly labelled responses and responses a person reads.
PLAIN = {PREFIX_AQUA: 180, PREFIX_GSM: 420}
HARD = {PREFIX_AQUA: 30, PREFIX_GSM: 0}  # GSM8K: every response a person would read is a non-integer (left out)


def _lines(repo: Path, path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _git(repo, "show", f"{COMMIT}:{path}").decode("utf-8").splitlines()
            if line.strip()]


def _option_text(option: str, letter: str) -> str:
    """AQuA writes an option "A)5(√3 + 1)"; the text is what follows the letter and its bracket."""
    return re.sub(rf"^\s*{letter}\s*\)\s*", "", option).strip()


def candidates(repo: Path) -> Iterator[Candidate]:
    options = _lines(repo, AQUA_OPTIONS_FILE)
    for i, row in enumerate(_lines(repo, AQUA_FILE)):
        item = options[i]
        if item["question"].strip() != row["question"].strip() or len(item["options"]) != len(LETTERS):
            continue  # the options cannot be matched to this question
        text, dropped = capped(str(row.get("metadata_generation") or ""))
        yield Candidate(
            id=f"{PREFIX_AQUA}:{i}", shape="gpqa", response=text, model=MODEL, family=FAMILY, reasoning_model=False,
            source={"repo": REPO, "path": AQUA_FILE, "commit": COMMIT, "index": i, "field": "metadata_generation",
                    "license": LICENSE, "options_from": AQUA_OPTIONS_FILE},
            letters=list(LETTERS), choices=[_option_text(o, L) for o, L in zip(item["options"], LETTERS)],
            hint=_aqua_hint(text), asked_format=ASKED, extra={"dropped_chars": dropped})
    for i, row in enumerate(_lines(repo, GSM_FILE)):
        text, dropped = capped(str(row.get("metadata_generation") or ""))
        yield Candidate(
            id=f"{PREFIX_GSM}:{i}", shape="aime", response=text, model=MODEL, family=FAMILY, reasoning_model=False,
            source={"repo": REPO, "path": GSM_FILE, "commit": COMMIT, "index": i, "field": "metadata_generation",
                    "license": LICENSE},
            hint=_gsm_hint(text), asked_format=ASKED, extra={"dropped_chars": dropped})


# --- the hint: what the repository's CoT examples extract (the last "The answer is" and what follows it) ---

def _last_answer_is(text: str) -> str | None:
    found = list(re.finditer(r"[Tt]he answer is", text))
    return text[found[-1].end():] if found else None


def _aqua_hint(text: str) -> str | None:
    tail = _last_answer_is(text)
    m = re.search(r"[A-E]", tail) if tail is not None else None
    return m.group(0) if m else None


def _gsm_hint(text: str) -> str | None:
    tail = _last_answer_is(text)
    m = re.match(r".*?([ $.0-9,\-]+).*\.", tail, re.DOTALL) if tail is not None else None
    if not m:
        return None
    value = re.sub(r"[,$ ]", "", m.group(1))
    return value[value.rindex("=") + 1:] if "=" in value else value


# --- plain labels: only responses whose answer cannot be read two ways ---

# One closing statement, nothing after it; the first letter of "The" may be lost ("he answer is B.").
_AQUA_CLOSING = re.compile(r"(?:[Tt]?he )?answer is:?\s*\(?([A-E])\)?\.?\s*$")
_GSM_CLOSING = re.compile(r"(?:[Tt]?he )?answer is:?\s*\$?\s*(-?\d{1,3}(?:,\d{3})+|-?\d+)(?:\.0+)?\.?\s*$")
# The same closing with a number that is no integer ("The answer is 28.8."): a committed non-integer, outside the shape.
_GSM_CLOSING_DECIMAL = re.compile(r"(?:[Tt]?he )?answer is:?\s*\$?\s*-?\d*\.\d*[1-9]\d*\.?\s*$")


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the response holds one answer statement only ("answer is" once, no made-up next "Q:"), it closes the
    response with one option letter (AQuA) or one integer (GSM8K), and the repository's extraction reads the same;
    a single closing GSM8K answer that is no integer ("The answer is 28.8.") is left out ("skip", as in the sixteenth
    batch); anything else (a continuation with more questions, a bare letter, a sentence after the answer) goes to a
    person."""
    text = c.response
    if text.count("answer is") != 1 or re.search(r"(?:^|\n)\s*Q:", text):
        return "hard", None, None
    if c.shape == "gpqa":
        m = _AQUA_CLOSING.search(text)
        if not m or c.hint != m.group(1):
            return "hard", None, None
        return "plain", m.group(1), None
    m = _GSM_CLOSING.search(text)
    if not m:
        return ("skip", None, None) if _GSM_CLOSING_DECIMAL.search(text) else ("hard", None, None)
    value = int(m.group(1).replace(",", ""))
    try:
        agrees = float(str(c.hint)) == value
    except ValueError:
        agrees = False
    return ("plain", value, None) if agrees else ("hard", None, None)
