"""The eighteenth batch: R1-distilled models' MATH-500 outputs committed in gtxygyzb/Saturn-code (see SOURCES.md).

The SATURN authors (Apache-2.0) evaluated DeepSeek-R1-Distill-Qwen-7B and their own Saturn-7B (that model trained
further with reinforcement learning on SAT puzzles) on MATH-500 with lighteval and committed its per-sample details as
parquet files. The prompt asks the model to solve the problem and to end with "Therefore, the final answer is:
$\\boxed{ANSWER}$. I hope it is correct", and the chat template opens the thinking itself ("<｜Assistant｜><think>\\n"), so
a response holds the thinking, "</think>" where the model closed it, and the answer. lighteval's own extraction of the
prediction (`specifics.extracted_predictions`) is the hint here, never the label. Only problems whose reference answer
is an integer are used (MATH is MIT).
"""
from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import Candidate, _git, capped
from tests.judges.real.tora import boxed_values

REPO = "gtxygyzb/Saturn-code"
COMMIT = "a8616c54122a61a90790144c4c062c721b89777b"  # the commit that added the results; HEAD holds the same blobs
PREFIX = "saturn-math500"
LICENSE = "Apache-2.0 (repository); MATH MIT"
_DETAILS = "results/Results/Math_and_Programming/{model}/details/{run}/details_custom_math_500_0_{run}.parquet"
FILES = {
    _DETAILS.format(model="DeepSeek-R1-Distill-Qwen-7B", run="2025-03-30T03-40-46.900786"):
        "DeepSeek-R1-Distill-Qwen-7B",
    _DETAILS.format(model="Saturn-7B", run="2025-04-16T06-13-52.042180"): "Saturn-7B",
}
ASKED = ("solve the problem step by step and end with the line \"Therefore, the final answer is: $\\boxed{ANSWER}$. "
         "I hope it is correct\"; the chat template opens <think> itself")
# Per model: every plainly labelled response, and a seeded sample of those a person must read.
PLAIN = 400
HARD = 25

_INTEGER = re.compile(r"-?\d+")


def candidates(repo: Path) -> Iterator[Candidate]:
    import pandas as pd  # a project dependency; imported here so the other batches build without reading parquet

    for path, model in FILES.items():
        table = pd.read_parquet(io.BytesIO(_git(repo, "show", f"{COMMIT}:{path}")))
        for i, row in enumerate(table.itertuples(index=False)):
            golds = list(row.specifics.get("extracted_golds", []))
            if not golds or not _INTEGER.fullmatch(str(golds[0]).strip()):
                continue  # the integer shape only
            predictions = list(row.predictions)
            text, dropped = capped(str(predictions[0]) if predictions else "")
            extracted = list(row.specifics.get("extracted_predictions", []))
            yield Candidate(
                id=f"{PREFIX}:{model}:{i}", shape="aime", response=text, model=model, family="DeepSeek-R1",
                reasoning_model=True,
                source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "predictions[0]",
                        "license": LICENSE},
                hint=str(extracted[0]) if extracted else None, asked_format=ASKED,
                extra={"dropped_chars": dropped})


# --- plain labels: only responses whose answer cannot be read two ways ---

_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
# A boxed integer, "$" and thousands commas allowed; a decimal that is no integer is a committed non-integer.
_BOXED_INT = re.compile(r"\s*(?:\\\$|\$)?\s*(-?\d{1,3}(?:,\d{3})+|-?\d+)\s*")
_BOXED_DECIMAL = re.compile(r"\s*-?\d*\.\d+\s*")
_CLOSE = "</think>"


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the model closed its thinking, every \\boxed{} after "</think>" holds the same integer (at least one
    box), and that integer equals lighteval's extraction; a reply whose answer boxes a non-integer decimal is left out
    ("skip"); anything else (no "</think>", no box after it, boxes that differ, a fraction or an expression) is read by
    a person. Boxes inside the thinking are not looked at: the answer after "</think>" is what the model commits."""
    if _CLOSE not in c.response:
        return "hard", None, None
    answer = c.response.rsplit(_CLOSE, 1)[1]
    unread, values, written = boxed_values(_BOXED.findall(answer), _BOXED_INT, _BOXED_DECIMAL)
    if unread:
        return unread, None, None
    if len(values) != 1:
        return "hard", None, None
    value = values.pop()
    if str(c.hint).strip() != str(value):
        return "hard", None, None
    shown = sorted(written)[0]
    return "plain", value, None if shown == str(value) else f"answer written \\boxed{{{shown}}}, read as {value}"
