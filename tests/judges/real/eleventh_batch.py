"""The eleventh batch: more responses from source files the corpus already uses (see SOURCES.md).

The held-out misses of rules-v10 sit in a few families; this batch draws a fresh sample from those same files so that
the tuning split sees more of their shapes. A response is taken only if no earlier batch sampled it (compared by its
source file and position there, and by its id), so that no held-out response can reach the tuning split. Each new
record's id is its earlier-style id with "more-" in front; the plain rules of its source label it unchanged.
"""
from __future__ import annotations

from typing import Any

from tests.judges.real import resample
from tests.judges.real.sources import Candidate

PREFIX = "more-"
SEED = "real-output-corpus-v11"  # the batch's own sampling seed; the split keeps the corpus's hash rule
# Per source: plain responses and responses a person reads, drawn from the whole source (one stratum per source),
# weighted by the held-out misses of rules-v10 (mathvista-mc 3, r1-mmlupro 3, mmlupro 2, llama31-mmlupro 2,
# mmmu-mc 2, one each for the rest) and toward the hard ones.
PLAIN = {"mathvista-mc": 140, "mathvista-int": 50, "r1-mmlupro": 130, "mmlupro": 90, "llama31-mmlupro": 85,
         "mmmu-mc": 80, "mmmu-int": 5, "gptoss-mmlupro": 40, "sevru-mmlupro": 40, "bbh-mc": 40}
HARD = {"mathvista-mc": 20, "mathvista-int": 10, "r1-mmlupro": 16, "mmlupro": 12, "llama31-mmlupro": 10,
        "mmmu-mc": 10, "mmmu-int": 4, "gptoss-mmlupro": 5, "sevru-mmlupro": 5, "bbh-mc": 5}
# MMMU: only Qwen-VL-7B's free-form answers (LLaVA's one-letter replies hold no shape the reader lacks).
ONLY_MODEL = {"mmmu-mc": "Qwen-VL-7B", "mmmu-int": "Qwen-VL-7B"}
PREFIXES = tuple(PREFIX + source for source in PLAIN)


def source_key(c: Candidate) -> tuple[Any, ...]:
    """Where the response sits: repository, file (and zip member), position in the file."""
    return c.source["repo"], c.source["path"], c.source.get("member"), c.source.get("index")


def candidates(all_candidates: list[Candidate], earlier: list[Candidate]) -> list[Candidate]:
    """The batch's candidates: responses of its sources that no earlier batch sampled, renamed with PREFIX."""
    return resample.fresh_candidates(all_candidates, earlier, PREFIX, PLAIN, ONLY_MODEL, key=source_key)


def original(c: Candidate) -> Candidate:
    """The candidate under its earlier-style id, for its source's plain rules."""
    return resample.original(c, PREFIX)
