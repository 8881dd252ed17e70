"""The twenty-sixth batch: recurrent and hybrid (Mamba) chat models on GSM8K, committed in jxiw/ZeroEval.

The repository (Apache-2.0) is a fork of ZeroEval whose own commit `e25e836b` ("add mamba models", 2024-08-26, by the
fork's owner) adds ZeroEval's zero-shot GSM8K runs (the test set, 1,319 problems, MIT) of six models: the owner's
MambaInLlama and Mamba2InLlama hybrids (Llama-3-8B-Instruct with half of its attention layers replaced by Mamba or
Mamba-2 layers, two fine-tuned versions each; `_0_50` is the share of attention kept), TII's Falcon-Mamba-7B-Instruct
(a pure Mamba model) and Google's RecurrentGemma-9B-it (Griffin: recurrence with local attention). The prompt is
ZeroEval's: reason, then give the result as a JSON object `{"reasoning": ..., "answer": ...}`; the hybrids often write a
markdown "Reasoning" section and an "Answer" section holding the object. The files keep each reply with its closing
special token (`<|eot_id|>`, `<|im_end|>`, `<eos>`); nothing is cut. The earlier ZeroEval batch read the upstream
repository (`WildEval/ZeroEval`); none of these six runs is there.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import Candidate, _git, _gold_integer, capped, json_answer

REPO = "jxiw/ZeroEval"
COMMIT = "e25e836b96d7a0435004ef999ac082aea2cb8a4a"  # the commit that adds the six runs; none changes them later
PREFIX = "hybrid-gsm"
LICENSE = "Apache-2.0 (repository); GSM8K MIT"
# File stem -> family (the hybrids are Llama-3-8B-Instruct distilled into Mamba layers).
MODELS = {"MambaInLlama_0_50_v1": "Llama-Mamba hybrid", "MambaInLlama_0_50_v2": "Llama-Mamba hybrid",
          "Mamba2InLlama_0_50_v1": "Llama-Mamba hybrid", "Mamba2InLlama_0_50_v2": "Llama-Mamba hybrid",
          "falcon-mamba-7b-instruct": "Falcon-Mamba", "recurrentgemma-9b-it": "Gemma"}
ASKED = 'zero-shot, reasoning first, then a JSON object with "reasoning" and "answer" fields'
# Per stratum (one per model): plain responses and responses a person reads.
PLAIN = 110
HARD = 12


def candidates(repo: Path) -> Iterator[Candidate]:
    for model, family in MODELS.items():
        path = f"result_dirs/gsm/{model}.json"
        for i, row in enumerate(json.loads(_git(repo, "show", f"{COMMIT}:{path}"))):
            if _gold_integer(row) is None:
                continue  # GSM8K's references are all integers; kept as the earlier ZeroEval batch did
            out = row.get("output")
            text, dropped = capped(out[0] if isinstance(out, list) and out else str(out or ""))
            yield Candidate(
                id=f"{PREFIX}:{model}:{row.get('id', i)}", shape="aime", response=text, model=model, family=family,
                reasoning_model=False,
                source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "output",
                        "license": LICENSE},
                hint=json_answer(text), asked_format=ASKED, extra={"dropped_chars": dropped})


# The "answer" field, quoted or a bare number, wherever it stands (a second one means two objects or a repeat).
_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*(?:"[^"\n]*"|-?\d)')
# An integer as the field may hold it: "$1,080", "18", "-3", "42.0".
_FIELD_INTEGER = re.compile(r"\$?(-?(?:\d{1,3}(?:,\d{3})+|\d+))(?:\.0+)?")


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the reply holds one JSON object (from its first "{" to its last "}", working before it allowed) that
    parses, with the only "answer" field of the reply, whose value is an integer ("$" and thousands commas allowed);
    anything else (no object, an object that does not parse, two answer fields, words or a unit in the field, a
    non-integer) is read by a person."""
    if c.hint is None or len(_ANSWER_FIELD.findall(c.response)) != 1:
        return "hard", None, None
    m = _FIELD_INTEGER.fullmatch(c.hint.strip())
    if not m:
        return "hard", None, None
    value = int(m.group(1).replace(",", ""))
    return "plain", value, None if str(value) == c.hint.strip() else f"answer field {c.hint.strip()!r}, read as {value}"


# What may close a reply after its object: spaces, the fence's closing backticks, the model's end-of-turn token.
_CLOSING = re.compile(r"(?:\s|```|<eos>|<\|eot_id\|>|<\|im_end\|>)*$")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def needs_person(c: Candidate) -> bool:
    """Checked after sampling (the sample stays as drawn): a plainly labelled reply that goes on after its object with a
    number other than the field's (a "Correction:" comment, a second working that ends elsewhere)."""
    after = _CLOSING.sub("", c.response[c.response.rfind("}") + 1:])
    value = plain_label(c)[1]
    return any(n.replace(",", "") != str(value) for n in _NUMBER.findall(after))
