"""The fifteenth batch: two more ThoughtSource files of GPT-3.5-turbo and GPT-4 runs (see SOURCES.md, section 15).

OpenBioLink/ThoughtSource's paper_2 folder holds, besides the four files of the fourteenth batch, the runs its authors
used to compare GPT-3.5-turbo with GPT-4 on 100 questions per data set: one file with the step-by-step prompt ("zhou-01")
and one with no reasoning trigger. They are separate runs (their texts differ from the fourteenth batch's), with the same
prompt and the same second call for the letter. A response is taken only if no earlier batch sampled it (by its source
file and position, and by its fourteenth-batch-style id) and if its text is not word for word a response of the
fourteenth batch's files (the no-trigger file repeats many of those), so that no held-out response can reach the tuning
split. The plain rules are the fourteenth batch's.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
import json

from tests.judges.real import thoughtsource
from tests.judges.real.resample import location
from tests.judges.real.sources import Candidate, _git

PREFIX = "tsource2-mc"
SEED = "real-output-corpus-v15"  # the batch's own sampling seed; the split keeps the corpus's hash rule
_DIR = "notebooks/internal_documentation/paper_2/"
FILES = {
    _DIR + "chat-gpt_vs_gpt4_only_zhou-cot.json": ("gpt-3.5-turbo", "gpt-4"),
    _DIR + "chat-gpt_vs_gpt4_none_cot.json": ("gpt-3.5-turbo", "gpt-4"),
}
MODELS = {"gpt-3.5-turbo": ("GPT-3.5-turbo", "GPT"), "gpt-4": ("GPT-4", "GPT")}
# Per stratum (model and prompt): plain responses and responses a person reads.
PLAIN = 150
HARD = 14


def _raw(repo: Path) -> Iterator[Candidate]:
    for path, names in FILES.items():
        data = json.loads(_git(repo, "show", f"{thoughtsource.COMMIT}:{path}"))
        for name in names:
            model, family = MODELS[name]
            for dataset in thoughtsource.DATASETS:
                for split, items in data.get(dataset, {}).items():
                    for index, item in enumerate(items):
                        yield from thoughtsource._item_candidates(item, dataset, split, index, path, name, model,
                                                                  family)


def candidates(repo: Path, all_candidates: list[Candidate], earlier: list[Candidate]) -> list[Candidate]:
    """The batch's candidates, renamed with PREFIX: none sampled before, none a copy of a fourteenth-batch response."""
    taken_ids = {c.id for c in earlier}
    taken_keys = {location(c) for c in earlier}
    known_texts = {c.response.strip() for c in all_candidates if c.id.startswith(thoughtsource.PREFIX + ":")}
    out = []
    for c in _raw(repo):
        if c.id in taken_ids or location(c) in taken_keys or c.response.strip() in known_texts:
            continue
        out.append(replace(c, id=PREFIX + c.id[len(thoughtsource.PREFIX):]))
    return out
