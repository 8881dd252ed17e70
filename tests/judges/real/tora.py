"""The sixteenth batch: ToRA's committed GSM8K outputs in microsoft/ToRA (see SOURCES.md).

ToRA (MIT) fine-tuned Llama-2-70B and CodeLlama-34B to solve math problems by interleaving prose, Python blocks and the
blocks' printed output ("```output ... ```"), then a final answer in \\boxed{}. The committed runs give each model the
GSM8K test problem alone in the chat format it was trained on ("<|user|>\\n<question>\\n<|assistant|>\\n"), greedy;
nothing in the prompt says how to state the answer. Each line holds the response (`code`, a list of one) and the
script's extraction (`pred`), the hint here, never the label. GSM8K is MIT.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import Candidate, _git, capped

REPO = "microsoft/ToRA"
COMMIT = "aeb21126d28347f595d87f2822cb92bfe32f00e8"  # the commit that added the outputs; HEAD holds the same blobs
PREFIX = "tora-gsm"
LICENSE = "MIT (repository); GSM8K MIT"
FILES = {
    "src/outputs/llm-agents/tora-70b-v1.0/gsm8k/test_tora_-1_seed0_t0.0_s0_e1319.jsonl": ("ToRA-70B", "Llama"),
    "src/outputs/llm-agents/tora-code-34b-v1.0/gsm8k/test_tora_-1_seed0_t0.0_s0_e1319.jsonl":
        ("ToRA-Code-34B", "Llama"),
}
ASKED = ("the GSM8K problem alone in the chat format the model was fine-tuned on; it was trained to reason with "
         "Python blocks and their output and to end with \\boxed{answer}")


def candidates(repo: Path) -> Iterator[Candidate]:
    for path, (model, family) in FILES.items():
        for i, line in enumerate(_git(repo, "show", f"{COMMIT}:{path}").decode("utf-8").splitlines()):
            row = json.loads(line)
            text, dropped = capped(str((row.get("code") or [""])[0]))
            yield Candidate(
                id=f"{PREFIX}:{model}:{row['idx']}", shape="aime", response=text, model=model, family=family,
                reasoning_model=False,
                source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "code[0]",
                        "license": LICENSE},
                hint=_hint(row.get("pred")), asked_format=ASKED, extra={"dropped_chars": dropped})


def _hint(pred: Any) -> Any:
    first = pred[0] if isinstance(pred, list) and pred else pred
    return first if first not in ("", None) else None


# --- plain labels: only responses whose answer cannot be read two ways ---

_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
# A boxed integer, "$" and thousands commas allowed ("18", "\\$1,080", "-3", and "18.0", a Python float printed and boxed);
# a decimal that is no integer ("12.5") is a committed non-integer, outside the shape; anything else (a unit, a
# percent sign, a fraction, words) is for a person.
_BOXED_INT = re.compile(r"\s*(?:\\\$|\$)?\s*(-?\d{1,3}(?:,\d{3})+|-?\d+)(\.0+)?\s*")
_BOXED_DECIMAL = re.compile(r"\s*(?:\\\$|\$)?\s*-?\d*\.\d+\s*")


def boxed_values(boxes: list[str], integer: re.Pattern, decimal: re.Pattern) -> tuple[str | None, set[int], set[str]]:
    """The integers the boxes hold and how each was written, or instead a status for the first box that holds something
    else: "skip" for a non-integer decimal (a committed non-integer), "hard" for what a person must read."""
    values, written = set(), set()
    for box in boxes:
        m = integer.fullmatch(box)
        if not m:
            return ("skip" if decimal.fullmatch(box) else "hard"), set(), set()
        values.add(int(m.group(1).replace(",", "")))
        written.add(box.strip())
    return None, values, written


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the reply has a \\boxed{} answer, every box in it holds the same integer, and that integer equals the
    script's extraction; a reply whose boxes hold a non-integer decimal is left out ("skip"); anything else (no box,
    boxes that differ, a box with a unit or a percent sign) is read by a person."""
    unread, values, written = boxed_values(_BOXED.findall(c.response), _BOXED_INT, _BOXED_DECIMAL)
    if unread:
        return unread, None, None
    if len(values) != 1:
        return "hard", None, None
    value = values.pop()
    try:
        agrees = float(str(c.hint).replace(",", "")) == value
    except ValueError:
        agrees = False
    if not agrees:
        return "hard", None, None
    shown = sorted(written)[0]
    why = None if shown == str(value) else f"answer written \\boxed{{{shown}}}, read as {value}"
    return "plain", value, why
