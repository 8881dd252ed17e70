"""The seventeenth batch: more responses from source files the corpus already uses (see SOURCES.md, section 17).

The held-out misses of rules-v10 sit in a few families (tanay-mmlupro, theoremqa-int, tora-gsm, mathvista-mc, the
MMLU-Pro forks, mmmu-mc); this batch draws a fresh sample from those same files, weighted toward the responses the plain
rules cannot label, so that the tuning split sees more of their shapes. As in the eleventh batch, a response is taken
only if no earlier batch sampled it (compared by its source file and position there, and by its id, with the eleventh
batch's "more-" taken off), and the batch is drawn after every earlier sample, so no earlier record moves. Each new
record's id is its earlier-style id with "again-" in front; the plain rules (and after-sampling checks) of its source
label it unchanged.
"""
from __future__ import annotations

from tests.judges.real import eleventh_batch, resample
from tests.judges.real.sources import Candidate

PREFIX = "again-"
SEED = "real-output-corpus-v17"  # the batch's own sampling seed; the split keeps the corpus's hash rule
# Per source: plain responses and responses a person reads, one stratum per source, weighted by the held-out misses of
# rules-v10 (tanay-mmlupro 3, mathvista-mc 3, r1-mmlupro 3, theoremqa-int 2, tora-gsm 2, llama31-mmlupro 2, mmmu-mc 2)
# and toward the hard ones.
PLAIN = {"tanay-mmlupro": 150, "theoremqa-int": 0, "tora-gsm": 120, "datta-mmlupro": 90, "mathvista-mc": 50,
         "mvfork-mc": 40, "r1-mmlupro": 60, "llama31-mmlupro": 50, "mmmu-mc": 40}
# TheoremQA's plainly labelled integer answers were all taken by the tenth batch; only its hard ones are left.
HARD = {"tanay-mmlupro": 10, "theoremqa-int": 12, "tora-gsm": 6, "datta-mmlupro": 8, "mathvista-mc": 8,
        "mvfork-mc": 6, "r1-mmlupro": 6, "llama31-mmlupro": 4, "mmmu-mc": 4}
# MMMU: only Qwen-VL-7B's free-form answers, as in the eleventh batch (tanaybaswa's GPT-4o runs were all taken before).
ONLY_MODEL = {"mmmu-mc": "Qwen-VL-7B"}
PREFIXES = tuple(PREFIX + source for source in PLAIN)


def _earlier_id(rid: str) -> str:
    return rid[len(eleventh_batch.PREFIX):] if rid.startswith(eleventh_batch.PREFIXES) else rid


def candidates(all_candidates: list[Candidate], earlier: list[Candidate]) -> list[Candidate]:
    """The batch's candidates: responses of its sources that no earlier batch sampled, renamed with PREFIX."""
    return resample.fresh_candidates(all_candidates, earlier, PREFIX, PLAIN, ONLY_MODEL, earlier_id=_earlier_id)


def original(c: Candidate) -> Candidate:
    """The candidate under its earlier-style id, for its source's plain rules and checks."""
    return resample.original(c, PREFIX)
