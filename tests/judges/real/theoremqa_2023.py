"""The twenty-third batch: the first TheoremQA release's committed zero-shot answers (see SOURCES.md).

wenhuchen/TheoremQA (MIT, the questions included) is the repository of the TheoremQA paper (2023); it is not the
later TIGER-AI-Lab/TheoremQA of the tenth batch, which holds other runs. Its outputs/ folder held every model's
zero-shot chain-of-thought answers to the 800 questions until a 2024 commit deleted it; they are read at the commit
before that one. The API models were asked to close with "Therefore, the answer is ..."; Alpaca, Vicuna and
OpenAssistant's Pythia were given an instruction prompt asking them to think step by step and give the answer in
numerical form (or as "(a)" ... "(d)"). Each line holds the question, the response (`rationale`), the script's own
extraction (`prediction`, the hint, never the label) and the reference. Used: the questions whose reference is an
integer (216 per run) and the multiple-choice ones whose options are written "(a) ... (b) ..." in the question; the
program-of-thought runs (code, not prose) are not. For Alpaca and Vicuna the stored text begins with the prompt; the
record keeps only what follows the prompt's "### Response:" line.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from tests.judges.real.sources import Candidate, _git, _theoremqa_options, capped

REPO = "wenhuchen/TheoremQA"
# The parent of 920a15698d1b3965d22183644bcc7adb251ef8fc (2024-04-09), which deleted outputs/.
COMMIT = "ed325df9aa816996b6bc2b60af1701e55c09a372"
PREFIXES = ("tqa23-int", "tqa23-mc")
LICENSE = "MIT (repository and TheoremQA's questions)"
_API_ASKED = ('zero-shot; a system message asking for the answer in the final sentence "Therefore, the answer is ..." '
              "as an integer, a float, a list, True/False or an option")
_CLAUDE_ASKED = ('zero-shot; "Please think step by step, and then conclude the answer as `therefore, the answer is '
                 "...'\" (for a multiple-choice question: \"(a)/(b)/(c)/(d)\")")
_ALPACA_ASKED = ('zero-shot Alpaca-style prompt: "Please read a math problem, and then think step by step to derive the '
                 'answer. The answer needs to be in numerical form." (or "(a), (b), (c) or (d)")')
_PYTHIA_ASKED = ('zero-shot: "Please think step by step to derive the answer in deciaml [sic] form." (or "The answer '
                 'should be (a), (b), (c) or (d).")')
# One stratum per run and kind: file -> (model, family, how the prompt asked for the answer).
RUNS = {
    "outputs/ChatGPT_s0_e-1_05_13_10_25.jsonl": ("gpt-3.5-turbo (May 2023)", "GPT", _API_ASKED),
    "outputs/GPT4_s0_e-1_06_15_22_38.jsonl": ("gpt-4 (June 2023)", "GPT", _API_ASKED),
    "outputs/GPT3_s0_e-1_05_13_11_04.jsonl": ("text-davinci-002", "GPT-3", _API_ASKED),
    "outputs/GPT3.5_s0_e-1_05_13_11_04.jsonl": ("text-davinci-003", "GPT-3", _API_ASKED),
    "outputs/anthropic_v1_s0_e-1_05_12_23_41.jsonl": ("claude-v1", "Claude", _CLAUDE_ASKED),
    "outputs/anthropic_instant-v1_s0_e-1_05_27_09_42.jsonl": ("claude-instant-v1", "Claude", _CLAUDE_ASKED),
    "outputs/anthropic_v2_s0_e-1_08_02_00_15.jsonl": ("claude-2", "Claude", _CLAUDE_ASKED),
    "outputs/alpaca_s0_e-1_05_15_02_19.jsonl": ("Alpaca-13B", "Alpaca (LLaMA)", _ALPACA_ASKED),
    "outputs/vicuna_s0_e-1_05_16_19_54.jsonl": ("Vicuna", "Vicuna (LLaMA)", _ALPACA_ASKED),
    "outputs/pythia_s0_e-1_05_17_00_17.jsonl": ("oasst-sft-1-pythia-12b", "Pythia (OpenAssistant)", _PYTHIA_ASKED),
}
# Per run: a seeded sample of plainly labelled answers and of answers a person must read.
PLAIN = {"tqa23-int": 100, "tqa23-mc": 8}
HARD = {"tqa23-int": 4, "tqa23-mc": 2}
# The first line of four files was printed (its opening 300 characters) while looking at the format, before sampling.
READ_BEFORE_SAMPLING = {("outputs/ChatGPT_s0_e-1_05_13_10_25.jsonl", 0), ("outputs/vicuna_s0_e-1_05_16_19_54.jsonl", 0),
                        ("outputs/alpaca_s0_e-1_05_15_02_19.jsonl", 0),
                        ("outputs/anthropic_v2_s0_e-1_08_02_00_15.jsonl", 0)}
_RESPONSE_MARK = "### Response:"
_INTEGER_REFERENCE = re.compile(r"-?\d+")
_OPTION_REFERENCE = re.compile(r"\([a-f]\)")


def _own_text(rationale: str) -> str:
    """The model's part: Alpaca's and Vicuna's stored text begins with the prompt, up to its "### Response:" line."""
    head, mark, rest = rationale.partition(_RESPONSE_MARK)
    return rest.lstrip("\n") if mark and head.startswith("Below is an instruction") else rationale


def candidates(repo: Path) -> Iterator[Candidate]:
    for path, (model, family, asked) in RUNS.items():
        for i, line in enumerate(_git(repo, "show", f"{COMMIT}:{path}").decode("utf-8").splitlines()):
            if (path, i) in READ_BEFORE_SAMPLING:
                continue
            row = json.loads(line)
            text, dropped = capped(_own_text(str(row.get("rationale") or "")).strip())
            common = dict(response=text, model=model, family=family, reasoning_model=False,
                          source={"repo": REPO, "path": path, "commit": COMMIT, "index": i, "field": "rationale",
                                  "license": LICENSE},
                          hint=row.get("prediction"), asked_format=asked, extra={"dropped_chars": dropped})
            reference = str(row.get("answer", "")).strip()
            if row.get("answer_type") == "integer" and _INTEGER_REFERENCE.fullmatch(reference):
                yield Candidate(id=f"tqa23-int:{model}:{i}", shape="aime", **common)
            elif row.get("answer_type") == "option" and _OPTION_REFERENCE.fullmatch(reference):
                options = _theoremqa_options(str(row.get("question", "")))
                if options:
                    yield Candidate(id=f"tqa23-mc:{model}:{i}", shape="gpqa",
                                    letters=[chr(65 + k) for k in range(len(options))], choices=options, **common)


# Alpaca and Vicuna often go on past their answer with a made-up next instruction or input.
_NEXT_TURN = re.compile(r"\n\s*###\s*(?:Instruction|Input|Response)|\n\s*<\|prompter\|>")


def for_plain_rules(c: Candidate) -> Candidate:
    """The response up to any made-up next turn, for the tenth batch's TheoremQA plain rule (the record keeps it
    whole)."""
    cut = _NEXT_TURN.search(c.response)
    return replace(c, response=c.response[:cut.start()]) if cut else c
