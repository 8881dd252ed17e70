"""The twenty-seventh batch: kuk/simple-evals-ru's BIG-Bench Hard and MATH runs (see SOURCES.md).

The sixth batch used the repository's MMLU-Pro and MGSM runs; this one reads its BBH and MATH runs (data/results/bbh/
and data/results/math/, one file per run, 200 questions each), which the sixth batch never opened. The prompt is BBH's own three-shot chain of thought:
each worked example ends "So the answer is (X)." (or the integer), then the question and "A: Let's think step by step."
Each line keeps the prompt (`instruction`), the reply (`answer`), the repository's extraction (`pred`, the hint, never
the label) and its grading. Used: the multiple-choice tasks (options "(A) ..." in the question asked, after the worked
examples) and the two integer tasks (object_counting, multistep_arithmetic_two); the yes/no, True/False and word tasks
are not. MATH was asked with simple-evals' prompt: step by step, the last line "Answer: $ANSWER", no \boxed needed;
only the problems whose reference (`target` in data/benches/math.jsonl, the repository's 500 MATH problems, MIT) is an
integer are used.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.judges.real.sources import (_BBH_OPTION, BBH_CHOICE_TASKS, BBH_INTEGER_TASKS, SIMPLE_EVALS_RU_REPO, Candidate,
                                       _blob_paths, _git, _simple_evals_ru_family, capped)

REPO = SIMPLE_EVALS_RU_REPO
COMMIT = "5fb1507eafd70be92ff3379440c13ee5272963ce"  # the commit the sixth batch reads
BBH_PREFIXES = ("sevru-bbh-mc", "sevru-bbh-int")
MATH_PREFIX = "sevru-math-int"
PREFIXES = (*BBH_PREFIXES, MATH_PREFIX)
SEED = "real-output-corpus-v27-simple-evals-ru-bbh"
LICENSE = {"bbh": "MIT (repository); BIG-Bench Hard data MIT", "math": "MIT (repository); MATH data MIT"}
ASKED = ('three-shot chain of thought (BBH\'s own prompt), each example ending "So the answer is (X)." or the integer, '
         'then "A: Let\'s think step by step."')
MATH_ASKED = ('zero-shot; "Solve the following math problem step by step. The last line of your response should be of '
              'the form Answer: $ANSWER ..." and "you do not need to use a \\boxed command" (simple-evals MATH)')
# Per run and kind: a seeded sample of plainly labelled answers and of answers a person must read.
PLAIN = {"sevru-bbh-mc": 10, "sevru-bbh-int": 4, MATH_PREFIX: 4}
HARD = {"sevru-bbh-mc": 1, "sevru-bbh-int": 1, MATH_PREFIX: 1}
# Lines whose prompt or extraction was printed while looking at the format, before sampling (no reply was shown).
READ_BEFORE_SAMPLING = {("data/results/bbh/01_gemini_flash_1_5.jsonl", 0), ("data/results/bbh/06_qwen_2_5_7b.jsonl", 0),
                        ("data/results/bbh/06_qwen_2_5_7b.jsonl", 23), ("data/results/bbh/06_qwen_2_5_7b.jsonl", 36),
                        ("data/results/math/06_qwen_2_5_7b.jsonl", 0)}
_INTEGER = re.compile(r"-?\d+")


def candidates(repo: Path) -> Iterator[Candidate]:
    yield from _bbh_candidates(repo)
    yield from _math_candidates(repo)


def _bbh_candidates(repo: Path) -> Iterator[Candidate]:
    for path in sorted(p for p in _blob_paths(repo, "data/results/bbh/") if p.endswith(".jsonl")):
        run = Path(path).stem  # "15_qwen_2_5_72b": the file's number tells two runs of a model apart
        for i, line in enumerate(_git(repo, "show", f"{COMMIT}:{path}").decode("utf-8").splitlines()):
            if (path, i) in READ_BEFORE_SAMPLING:
                continue
            row = json.loads(line)
            task = str(row["id"]).split("/", 1)[0]
            if task not in BBH_CHOICE_TASKS + BBH_INTEGER_TASKS:
                continue
            text, dropped = capped(str(row.get("answer") or ""))
            common = dict(response=text, model=run, family=_simple_evals_ru_family(run), reasoning_model=False,
                          source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "answer",
                                  "license": LICENSE["bbh"]},
                          hint=row.get("pred"), asked_format=ASKED, extra={"dropped_chars": dropped})
            if task in BBH_INTEGER_TASKS:
                yield Candidate(id=f"sevru-bbh-int:{run}:{row['id']}", shape="aime", **common)
                continue
            asked = str(row["instruction"]).rsplit("\nQ:", 1)[-1]  # the question asked, after the worked examples
            options = _BBH_OPTION.findall(asked.split("Options:", 1)[-1])
            yield Candidate(id=f"sevru-bbh-mc:{run}:{row['id']}", shape="gpqa", letters=[k for k, _ in options],
                            choices=[v for _, v in options], **common)


def _math_candidates(repo: Path) -> Iterator[Candidate]:
    targets = {}
    for line in _git(repo, "show", f"{COMMIT}:data/benches/math.jsonl").decode("utf-8").splitlines():
        row = json.loads(line)
        targets[str(row["id"])] = str(row["target"]).strip()
    for path in sorted(p for p in _blob_paths(repo, "data/results/math/") if p.endswith(".jsonl")):
        run = Path(path).stem
        for i, line in enumerate(_git(repo, "show", f"{COMMIT}:{path}").decode("utf-8").splitlines()):
            if (path, i) in READ_BEFORE_SAMPLING:
                continue
            row = json.loads(line)
            if not _INTEGER.fullmatch(targets.get(str(row["id"]), "")):
                continue  # only problems whose reference is an integer
            text, dropped = capped(str(row.get("answer") or ""))
            yield Candidate(id=f"{MATH_PREFIX}:{run}:{row['id']}", shape="aime", response=text, model=run,
                            family=_simple_evals_ru_family(run), reasoning_model=False,
                            source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "answer",
                                    "license": LICENSE["math"]},
                            hint=row.get("pred"), asked_format=MATH_ASKED, extra={"dropped_chars": dropped})


_CLOSING_LETTER = re.compile(r"answer is \(([A-Z])\)\.?\s*$")
_CLOSING_INT = re.compile(r"answer is (-?\d+)\.?\s*$")


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """Plain when the reply holds one "answer is" statement, closing it, whose letter (one of the question's) or
    integer equals the repository's extraction; anything else is read by a person."""
    if c.response.count("answer is") != 1:
        return "hard", None, None
    hint = str(c.hint or "").strip()
    if c.shape == "gpqa":
        m = _CLOSING_LETTER.search(c.response)
        if m and m.group(1) in (c.letters or []) and hint == f"({m.group(1)})":
            return "plain", m.group(1), None
        return "hard", None, None
    m = _CLOSING_INT.search(c.response)
    if m and re.fullmatch(r"-?\d+", hint) and int(hint) == int(m.group(1)):
        return "plain", int(m.group(1)), None
    return "hard", None, None
