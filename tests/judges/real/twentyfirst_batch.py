"""The twenty-first batch: more responses from source files the corpus already uses (see SOURCES.md, section 21).

The held-out misses of rules-v11 sit in a few families (mathvista-mc, r1-mmlupro, tanay-mmlupro, llama31-mmlupro,
mmmu-mc, theoremqa-int, one each in several more); this batch draws a fresh sample from those same files, weighted toward
the responses the plain rules cannot label, so that the tuning split sees more of their shapes. As in the eleventh and
seventeenth batches, a response is taken only if no earlier batch sampled it (compared by its source file and position
there, and by its id with an earlier batch's "more-" or "again-" taken off), and the batch is drawn after every earlier
sample, so no earlier record moves. Each new record's id is its earlier-style id with "anew-" in front; the plain rules
(and after-sampling checks) of its source label it unchanged.
"""
from __future__ import annotations

from tests.judges.real import eleventh_batch, resample, seventeenth_batch
from tests.judges.real.sources import Candidate

PREFIX = "anew-"
SEED = "real-output-corpus-v21"  # the batch's own sampling seed; the split keeps the corpus's hash rule
# Per source: plain responses and responses a person reads, one stratum per source, weighted by the held-out misses of
# rules-v11 (mathvista-mc 3, r1-mmlupro 3, tanay-mmlupro 3, llama31-mmlupro 2, mmmu-mc 2, theoremqa-int 2, one each
# for the rest) and toward the hard ones.
PLAIN = {"mathvista-mc": 130, "r1-mmlupro": 110, "tanay-mmlupro": 60, "llama31-mmlupro": 90, "mmmu-mc": 70,
         "theoremqa-int": 0, "bbh-mc": 40, "datta-mmlupro": 60, "gptoss-mmlupro": 40, "mathvista-int": 40,
         "mmlupro": 60, "mmmu-int": 0, "sevru-mmlupro": 40, "tora-gsm": 40}
# TheoremQA's and MMMU's integer answers have no plainly labelled response left (earlier batches took them all).
HARD = {"mathvista-mc": 12, "r1-mmlupro": 10, "tanay-mmlupro": 8, "llama31-mmlupro": 6, "mmmu-mc": 6,
        "theoremqa-int": 6, "bbh-mc": 3, "datta-mmlupro": 3, "gptoss-mmlupro": 4, "mathvista-int": 5,
        "mmlupro": 4, "mmmu-int": 3, "sevru-mmlupro": 3, "tora-gsm": 2}
# MMMU: only Qwen-VL-7B's free-form answers, as in the eleventh and seventeenth batches.
ONLY_MODEL = {"mmmu-mc": "Qwen-VL-7B", "mmmu-int": "Qwen-VL-7B"}
PREFIXES = tuple(PREFIX + source for source in PLAIN)


def _earlier_id(rid: str) -> str:
    """An earlier batch's id without its "more-" or "again-" (the id its response had in its source's first batch)."""
    if rid.startswith(eleventh_batch.PREFIXES):
        return rid[len(eleventh_batch.PREFIX):]
    if rid.startswith(seventeenth_batch.PREFIXES):
        return rid[len(seventeenth_batch.PREFIX):]
    return rid


def candidates(all_candidates: list[Candidate], earlier: list[Candidate]) -> list[Candidate]:
    """The batch's candidates: responses of its sources that no earlier batch sampled, renamed with PREFIX."""
    return resample.fresh_candidates(all_candidates, earlier, PREFIX, PLAIN, ONLY_MODEL, earlier_id=_earlier_id)


def original(c: Candidate) -> Candidate:
    """The candidate under its earlier-style id, for its source's plain rules and checks."""
    return resample.original(c, PREFIX)
