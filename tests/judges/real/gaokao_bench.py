"""The twentieth batch: GAOKAO-Bench's committed answers to China's national college entrance exam (see SOURCES.md).

OpenLMLab/GAOKAO-Bench (Apache-2.0, its questions included) ran chat and completion models on the exam's multiple-choice
questions (2010-2022; biology, chemistry, geography, history, politics, two maths papers, physics, Chinese and English)
and committed every answer. Its prompt (Chinese) asks the model to think step by step between "【解析】" and "<eoe>" and
to write the chosen letter between "【答案】" and "<eoa>". The runs: GPT-4-0314 (kept at HEAD), and GPT-3.5-turbo (four
runs), text-davinci-003 (three runs) and MOSS (three runs), which the repository held until the commit that replaced
them; all are read at that commit, which holds both. The source's own extraction (`model_answer`) is the hint, never the
label. Only questions with one reference letter are used (the multi-answer items, cloze passages and several-question
reading items are left out); each record is one model's answer to one question.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import Candidate, _git, capped

REPO = "OpenLMLab/GAOKAO-Bench"
# "new version" (2024-02-25): adds Results/ (GPT-4) and still holds result/ (the 2023 runs); the next commit deletes them.
COMMIT = "c214b47c7046d4ef048c77f0a7c5b545dc8d337b"
PREFIX = "gaokao-mc"
LICENSE = "Apache-2.0 (repository and GAOKAO-Bench's questions)"
ASKED = ("the benchmark's Chinese prompt: think step by step between 【解析】 and <eoe>, then write the chosen letter "
         "(A-D) between 【答案】 and <eoa>")
# One stratum per run: (model as recorded, family, folder of its answer files). MOSS runs 1 and 2 are not used: most of
# their items lack the source's extraction, so no plain rule could agree with it.
RUNS = (
    ("gpt-4-0314", "GPT", "Results/gpt_4_0314_obj"),
    *((f"gpt-3.5-turbo (run {n})", "GPT", f"result/gpt-3.5-turbo_选择题/gpt-3.5-turbo_选择题_{n}") for n in (1, 2, 3, 4)),
    *((f"text-davinci-003 (run {n})", "GPT-3", f"result/text-davinci-003_选择题/text-davinci-003_选择题_{n}")
      for n in (1, 2, 3)),
    ("MOSS (run 3)", "MOSS", "result/moss_选择题/moss_Multiple-choice_Questions_3"),
)
LETTERS = ["A", "B", "C", "D"]
# Per run: a seeded sample of plainly labelled answers and of answers a person must read.
PLAIN = 75
HARD = 6
# GPT-4's first biology answers (positions 0-16) were printed while looking at the file format, before sampling:
# they are left out of the candidates.
READ_BEFORE_SAMPLING = {("Results/gpt_4_0314_obj/gpt-4-0314_2010-2022_Biology_MCQs.json", i) for i in range(17)}


def _items(raw: Any) -> list[dict[str, Any]]:
    return raw["example"] if isinstance(raw, dict) else raw  # GPT-4's files wrap the list with the prompt


def _option_texts(question: str) -> list[str] | None:
    """The four option texts written "A．...B．...C．...D．..." at the question's end, or None when they cannot be
    cut out cleanly (each letter's last marker, in order, each text non-empty)."""
    marks = {m.start(): m for m in re.finditer(r"(?<![A-Za-z])([A-D])\s*[．.、:：]", question)}
    end = len(question)
    cuts: list[tuple[int, int]] = []
    for letter in reversed(LETTERS):
        found = [m for pos, m in marks.items() if m.group(1) == letter and m.end() <= end]
        if not found:
            return None
        m = max(found, key=lambda m: m.start())
        cuts.append((m.end(), end))
        end = m.start()
    texts = [question[a:b].strip() for a, b in reversed(cuts)]
    return texts if all(texts) else None


def candidates(repo: Path) -> Iterator[Candidate]:
    for model, family, folder in RUNS:
        listing = _git(repo, "ls-tree", "-z", "--name-only", f"{COMMIT}:{folder}").decode("utf-8").split("\0")
        for name in sorted(n for n in listing if n.endswith(".json")):
            path = f"{folder}/{name}"
            raw = json.loads(_git(repo, "show", f"{COMMIT}:{path}"))
            if not isinstance(raw, list) and "example" not in raw:
                continue  # a score summary, not answers
            for i, item in enumerate(_items(raw)):
                reference = item.get("standard_answer")
                if not (isinstance(reference, list) and len(reference) == 1 and reference[0] in LETTERS):
                    continue  # one reference letter only
                if (path, i) in READ_BEFORE_SAMPLING:
                    continue
                text, dropped = capped(str(item.get("model_output") or ""))
                said = item.get("model_answer")
                hint = ",".join(str(x) for x in said) if isinstance(said, list) else None
                subject = name.split("_", 1)[1].rsplit(".json", 1)[0]
                yield Candidate(
                    id=f"{PREFIX}:{model}:{subject}:{i}", shape="gpqa", response=text, model=model, family=family,
                    reasoning_model=False,
                    source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "model_output",
                            "license": LICENSE},
                    letters=list(LETTERS), choices=_option_texts(str(item.get("question", ""))), hint=hint,
                    asked_format=ASKED, extra={"dropped_chars": dropped})


# --- plain labels: only answers that cannot be read two ways ---

# The asked-for closing, with one letter and nothing after it: "【答案】: D <eoa>".
_TEMPLATE_END = re.compile(r"【答案】\s*[:：]?\s*([A-D])\s*<eoa>\s*$")
# MOSS answers with the letter alone, now and then inside the asked-for markers.
_BARE = re.compile(r"\s*(?:【答案】)?\s*[:：]?\s*([A-D])\s*(?:<eoa>)?\s*")


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the answer closes with the asked-for "【答案】 X <eoa>" (one letter, that marker only once) or, for
    MOSS, is the letter alone, and the source's extraction is that same letter; anything else goes to a person."""
    bare = _BARE.fullmatch(c.response)
    if bare:
        letter = bare.group(1)
    else:
        end = _TEMPLATE_END.search(c.response)
        if not end or c.response.count("【答案】") != 1:
            return "hard", None, None
        letter = end.group(1)
    return ("plain", letter, None) if c.hint == letter else ("hard", None, None)


# A conclusion in the reasoning: "所以选D", "因此答案为B", "故选：C", "综上，答案是A和C" (not "所以选项B是错误的").
_CONCLUSION = re.compile(r"(?:所以|因此|故|综上)[^。\n]{0,15}?(?:选择?(?!项)|答案(?:应该|应)?[是为]?)\s*[:：]?\s*"
                         r"([A-D](?:\s*[和与、,，及或]\s*[A-D]|[A-D])*)")


def needs_person(c: Candidate) -> bool:
    """Checked after sampling: a plainly labelled answer whose reasoning concludes on another letter, or on two."""
    letter = plain_label(c)[1]
    for m in _CONCLUSION.finditer(c.response):
        named = set(re.findall(r"[A-D]", m.group(1)))
        if named != {letter}:
            return True
    return False
