"""Builds the real-output corpus files from snapshots of the source repositories (see SOURCES.md).

    python -m tests.judges.real.build_corpus --mirrors DIR [--<source> <git dir> ...] [--queue FILE]

--mirrors DIR finds every source's snapshot as DIR/<owner>+<name>/repo (SOURCE_REPOS below lists them); a
--<source> option names one snapshot elsewhere.
(--mmmu's snapshot gives both MMMU-Pro's GPT-4o runs and the MMMU validation example runs of the seventh batch.)

Labels come from two places, never from judges.rules: an unambiguous response (one answer statement,
agreeing with the source's own extraction) is labelled by the plain rules below; every other sampled
response is read by a person and labelled in hand_labels.jsonl. Responses without either are left out
(and written to --queue for reading).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tests.judges.real import (eleventh_batch, fifteenth_batch, gaokao_bench, gemini_flash_lite, hinted_mmlupro,
                               hybrid_gsm, llm_reasoners_dbrx, saturn_math500, seventeenth_batch, simple_evals_ru_more,
                               theoremqa_2023, thoughtsource, tora, twentyfirst_batch)
from tests.judges.real.sources import (Candidate, bbh_candidates, gpt_oss_mmlu_pro_candidates,
                                      gsm_solution_candidates, llama31_mmlu_pro_candidates, math_v_candidates,
                                      mathvista_candidates, minimax_mmlu_pro_candidates, mmlu_pro_candidates,
                                      mmmu_pro_candidates, mmmu_val_candidates, qwen3_mmlu_pro_candidates,
                                      r1_distill_mmlu_pro_candidates, reasoning_trace_candidates,
                                      simple_evals_ru_candidates, zeroeval_candidates, history_mmlu_pro_candidates,
                                      theoremqa_candidates, mathvista_gpt4o_candidates,
                                      mathvista_internvl2_candidates, mathvista_local_candidates,
                                      datta_mmlu_pro_candidates, tanay_mmlu_pro_candidates)

HERE = Path(__file__).parent
HAND_LABELS = HERE / "hand_labels.jsonl"
SPLIT_FILES = {"tuning": HERE / "corpus_tuning.jsonl.gz", "heldout": HERE / "corpus_heldout.jsonl.gz"}
SEED = "real-output-corpus-v1"
SKIP = "skip"  # a hand label that leaves the response out of the corpus
# Per (source, model): responses that the plain rules label, and responses that need a person.
# The reasoning traces are few: every integer-answer one is taken, and all are read by hand.
PLAIN_PER_MODEL = {"mmlupro": 20, "zeroeval-gsm": 5, "zeroeval-math-l5": 5, "gsm8k-paper": 25, "r1-traces": 0,
                   "mathvista-mc": 28, "mathvista-int": 14, "qwen3-mmlupro": 36,
                   "minimax-mmlupro": 12, "gptoss-mmlupro": 8, "r1-mmlupro": 10,
                   "mmmupro-cot": 80, "mmmupro-direct": 25, "bbh-mc": 6, "bbh-int": 12,
                   "mathv-mc": 14, "mathv-int": 10, "llama31-mmlupro": 10,
                   "sevru-mmlupro": 18, "sevru-mgsm": 7, "mmmu-mc": 10, "mmmu-int": 10, "hist-mmlupro": 50,
                   "theoremqa-int": 125, "theoremqa-mc": 20, "mvfork-mc": 80, "mvfork-int": 45,
                   "datta-mmlupro": 12, "tsource-mc": 60, fifteenth_batch.PREFIX: fifteenth_batch.PLAIN, "tora-gsm": 300,
                   saturn_math500.PREFIX: saturn_math500.PLAIN, hinted_mmlupro.PREFIX: hinted_mmlupro.PLAIN,
                   gaokao_bench.PREFIX: gaokao_bench.PLAIN, gemini_flash_lite.PREFIX: gemini_flash_lite.PLAIN,
                   hybrid_gsm.PREFIX: hybrid_gsm.PLAIN, **theoremqa_2023.PLAIN, **simple_evals_ru_more.PLAIN}
# The thirteenth batch: per run (one stratum each; keys are "tanay-mmlupro:<model>") instead of per source.
TANAY_PLAIN = {"Jamba-1.5-large": 240, "Jamba-1.5-mini (run 1)": 100, "Jamba-1.5-mini (run 2)": 220}
TANAY_HARD = {"Jamba-1.5-large": 8, "Jamba-1.5-mini (run 1)": 8, "Jamba-1.5-mini (run 2)": 12}
TANAY_GPT4O_PLAIN = 14  # every response of each short GPT-4o run (all are plain)
HARD_PER_MODEL = {"mmlupro": 6, "zeroeval-gsm": 1, "zeroeval-math-l5": 1, "gsm8k-paper": 3, "r1-traces": 100,
                  "mathvista-mc": 9, "mathvista-int": 4, "qwen3-mmlupro": 5,
                  "minimax-mmlupro": 3, "gptoss-mmlupro": 3, "r1-mmlupro": 3,
                  "mmmupro-cot": 15, "mmmupro-direct": 5, "bbh-mc": 3, "bbh-int": 5,
                  "mathv-mc": 5, "mathv-int": 4, "llama31-mmlupro": 4,
                  "sevru-mmlupro": 2, "sevru-mgsm": 1, "mmmu-mc": 2, "mmmu-int": 5, "hist-mmlupro": 6,
                  "theoremqa-int": 20, "theoremqa-mc": 20, "mvfork-mc": 20, "mvfork-int": 10,
                  "datta-mmlupro": 1, "tanay-mmlupro": 0, "tsource-mc": 10,
                  fifteenth_batch.PREFIX: fifteenth_batch.HARD, "tora-gsm": 20,
                  saturn_math500.PREFIX: saturn_math500.HARD, hinted_mmlupro.PREFIX: hinted_mmlupro.HARD,
                  gaokao_bench.PREFIX: gaokao_bench.HARD, gemini_flash_lite.PREFIX: gemini_flash_lite.HARD,
                  hybrid_gsm.PREFIX: hybrid_gsm.HARD, **theoremqa_2023.HARD, **simple_evals_ru_more.HARD}
LETTERED_PER_MODEL = {"mmlupro": 5, "zeroeval-gsm": 0, "zeroeval-math-l5": 0, "gsm8k-paper": 0, "r1-traces": 0,
                      "mathvista-mc": 0, "mathvista-int": 0, "qwen3-mmlupro": 0,
                      "minimax-mmlupro": 0, "gptoss-mmlupro": 0, "r1-mmlupro": 0,
                      "mmmupro-cot": 0, "mmmupro-direct": 0, "bbh-mc": 0, "bbh-int": 0,
                      "mathv-mc": 0, "mathv-int": 0, "llama31-mmlupro": 0,
                      "sevru-mmlupro": 0, "sevru-mgsm": 0, "mmmu-mc": 0, "mmmu-int": 0,
                      "hist-mmlupro": 0, "theoremqa-int": 0,
                      "theoremqa-mc": 0, "mvfork-mc": 0, "mvfork-int": 0, "datta-mmlupro": 0,
                      "tanay-mmlupro": 0, "tsource-mc": 0,
                      fifteenth_batch.PREFIX: 0, "tora-gsm": 0, saturn_math500.PREFIX: 0,
                      hinted_mmlupro.PREFIX: 0, gaokao_bench.PREFIX: 0, gemini_flash_lite.PREFIX: 0,
                      hybrid_gsm.PREFIX: 0,
                      **{prefix: 0 for prefix in (*theoremqa_2023.PREFIXES, *simple_evals_ru_more.PREFIXES)}}
# Sources added after the first build draw their split from the sample itself (before any response is
# read), so that a hand label cannot move a record between splits; earlier sources keep their rule
# (split drawn over the kept records) so that none of their records moves.
FIFTH_BATCH = ("mmmupro-cot", "mmmupro-direct", "bbh-mc", "bbh-int", "mathv-mc", "mathv-int", "llama31-mmlupro")
SIXTH_BATCH = ("sevru-mmlupro", "sevru-mgsm")
SEVENTH_BATCH = ("mmmu-mc", "mmmu-int")
EIGHTH_BATCH = ("hist-mmlupro",)
NINTH_BATCH = ("mvfork-mc", "mvfork-int")
# TheoremQA's multiple-choice questions (17 per model) are all taken; their plain rule wants the letter alone, so the
# two-letter and option-text checks of the earlier batches have nothing to catch there.
TENTH_BATCH = ("theoremqa-int", "theoremqa-mc")
# More responses from ten sources already used, none sampled before (eleventh_batch.py); one stratum per source.
ELEVENTH_BATCH = eleventh_batch.PREFIXES
# One MMLU-Pro fork's own runs (DeepSeek-R1 with its thinking, Llama-3.1, Llama-3.3, an unnamed model); one stratum
# per model and subject, 12 plain and 1 hard response each.
TWELFTH_BATCH = ("datta-mmlupro",)
# Another MMLU-Pro copy's own runs (Jamba-1.5-large, Jamba-1.5-mini twice, five short GPT-4o runs); one stratum per
# run; the same plain rule and after-sampling checks as the twelfth batch.
THIRTEENTH_BATCH = ("tanay-mmlupro",)
# ThoughtSource's zero-shot runs (four models, one to three prompts each) on CommonsenseQA, MedQA, MedMCQA and OpenBookQA;
# one stratum per model and prompt, 60 plain and 10 hard responses each (thoughtsource.py).
FOURTEENTH_BATCH = (thoughtsource.PREFIX,)
# Two more ThoughtSource files (GPT-3.5-turbo and GPT-4, step-by-step and no trigger), none sampled before and none a
# copy of a fourteenth-batch response; one stratum per model and prompt (fifteenth_batch.py).
FIFTEENTH_BATCH = (fifteenth_batch.PREFIX,)
# ToRA-70B and ToRA-Code-34B on GSM8K, tool-integrated (Python blocks and their output, then \boxed{}); one stratum per
# model, 300 plain and 20 hard responses each (tora.py). Sampled from its own candidates, so no earlier sample moves.
SIXTEENTH_BATCH = (tora.PREFIX,)
# More responses from nine sources already used, none sampled by any earlier batch (seventeenth_batch.py); one stratum
# per source, drawn after every earlier sample.
SEVENTEENTH_BATCH = seventeenth_batch.PREFIXES
# DeepSeek-R1-Distill-Qwen-7B and Saturn-7B on MATH-500 (integer answers), thinking then a boxed answer, from lighteval's
# committed details (saturn_math500.py); one stratum per model, every plain response and up to 25 hard ones each.
# Sampled from its own candidates, so no earlier sample moves.
EIGHTEENTH_BATCH = (saturn_math500.PREFIX,)
# Claude-Haiku-4.5, Kimi-K2-Thinking and Qwen3-Next-80B-A3B-Thinking on MMLU-Pro, asked for "FINAL ANSWER: X" with and
# without a hint in the prompt (hinted_mmlupro.py); one stratum per model and hint condition, 36 plain and up to 8 hard
# responses each. Sampled from its own candidates, so no earlier sample moves.
NINETEENTH_BATCH = (hinted_mmlupro.PREFIX,)
# GAOKAO-Bench's multiple-choice answers (GPT-4, GPT-3.5-turbo four runs, text-davinci-003 three runs, MOSS one run) to
# China's college entrance exam, reasoning between 【解析】 and <eoe>, the letter between 【答案】 and <eoa>
# (gaokao_bench.py); one stratum per run. Sampled from its own candidates, so no earlier sample moves.
TWENTIETH_BATCH = (gaokao_bench.PREFIX,)
# More responses from fourteen sources already used, none sampled by any earlier batch (twentyfirst_batch.py); one
# stratum per source, drawn after every earlier sample.
TWENTYFIRST_BATCH = twentyfirst_batch.PREFIXES
# DBRX's few-shot chain-of-thought answers on AQuA (letters A-E) and GSM8K (integers) from llm-reasoners' AutoRace data
# (llm_reasoners_dbrx.py); one stratum per file. Sampled from its own candidates, so no earlier sample moves.
TWENTYSECOND_BATCH = llm_reasoners_dbrx.PREFIXES
# The twenty-third batch: the first TheoremQA release's zero-shot answers (theoremqa_2023.py); one stratum per run and
# kind. Sampled from its own candidates, so no earlier sample moves.
TWENTYTHIRD_BATCH = theoremqa_2023.PREFIXES
# Gemini 2.0 Flash-Lite's MMLU-Pro answers as a JSON object {"response": ..., "reasoning": ...}, zero-shot and few-shot
# (gemini_flash_lite.py); one stratum per prompt. Sampled from its own candidates, so no earlier sample moves.
TWENTYFOURTH_BATCH = (gemini_flash_lite.PREFIX,)
# The twenty-sixth batch: four Llama-Mamba hybrids, Falcon-Mamba and RecurrentGemma on GSM8K with ZeroEval's JSON
# prompt, from a ZeroEval fork's own runs (hybrid_gsm.py); one stratum per model. Sampled from its own candidates, so no
# earlier sample moves.
TWENTYSIXTH_BATCH = (hybrid_gsm.PREFIX,)
# kuk/simple-evals-ru's BBH and MATH runs (the sixth batch read its MMLU-Pro and MGSM runs): BBH's multiple-choice and
# integer tasks, MATH's integer problems (simple_evals_ru_more.py); one stratum per run and kind. MATH's plain rule is
# the sixth batch's MGSM rule (the same "Answer:" line). Sampled from its own candidates, so no earlier sample moves.
TWENTYSEVENTH_BATCH = simple_evals_ru_more.PREFIXES
SPLIT_ON_SAMPLE = ("mathvista-mc", "mathvista-int", "qwen3-mmlupro", "minimax-mmlupro", "gptoss-mmlupro",
                   "r1-mmlupro", *FIFTH_BATCH, *SIXTH_BATCH, *SEVENTH_BATCH, *EIGHTH_BATCH, *NINTH_BATCH,
                   *TENTH_BATCH, *ELEVENTH_BATCH, *TWELFTH_BATCH, *THIRTEENTH_BATCH, *FOURTEENTH_BATCH,
                   *FIFTEENTH_BATCH, *SIXTEENTH_BATCH, *SEVENTEENTH_BATCH, *EIGHTEENTH_BATCH,
                   *NINETEENTH_BATCH, *TWENTIETH_BATCH, *TWENTYFIRST_BATCH, *TWENTYSECOND_BATCH, *TWENTYTHIRD_BATCH,
                   *TWENTYFOURTH_BATCH, *TWENTYSIXTH_BATCH, *TWENTYSEVENTH_BATCH)
for _source in eleventh_batch.PLAIN:
    PLAIN_PER_MODEL[eleventh_batch.PREFIX + _source] = eleventh_batch.PLAIN[_source]
    HARD_PER_MODEL[eleventh_batch.PREFIX + _source] = eleventh_batch.HARD[_source]
    LETTERED_PER_MODEL[eleventh_batch.PREFIX + _source] = 0
for _source in seventeenth_batch.PLAIN:
    PLAIN_PER_MODEL[seventeenth_batch.PREFIX + _source] = seventeenth_batch.PLAIN[_source]
    HARD_PER_MODEL[seventeenth_batch.PREFIX + _source] = seventeenth_batch.HARD[_source]
    LETTERED_PER_MODEL[seventeenth_batch.PREFIX + _source] = 0
for _source in twentyfirst_batch.PLAIN:
    PLAIN_PER_MODEL[twentyfirst_batch.PREFIX + _source] = twentyfirst_batch.PLAIN[_source]
    HARD_PER_MODEL[twentyfirst_batch.PREFIX + _source] = twentyfirst_batch.HARD[_source]
    LETTERED_PER_MODEL[twentyfirst_batch.PREFIX + _source] = 0
for _source in TWENTYSECOND_BATCH:
    PLAIN_PER_MODEL[_source] = llm_reasoners_dbrx.PLAIN[_source]
    HARD_PER_MODEL[_source] = llm_reasoners_dbrx.HARD[_source]
    LETTERED_PER_MODEL[_source] = 0

# "The answer is (C)" as the MMLU-Pro prompt asks for it; letters are capitals only.
_ANSWER_IS = re.compile(r"answer is:?\s*\**\s*\(?([A-P])\)?(?![A-Za-z0-9])")
# A line "Answer: C" or "**Answer:** C. <option text>".
_ANSWER_LINE = re.compile(r"^\**Answer:?\**:?\s*\**\(?([A-J])\)?(?![A-Za-z0-9])", re.MULTILINE)
# Base models go on to write a next, made-up few-shot question after answering the real one.
_NEXT_QUESTION = re.compile(r"\n\s*Question:")
# An option letter named outside "answer is": "(C)", "\boxed{C}", "option C".
_LETTER_MENTION = re.compile(r"\([A-J]\)|\\boxed\{[A-J]\}|\b(?:[Oo]ption|[Cc]hoice)\s+\(?[A-J]\b")
_INTEGER = re.compile(r"-?\d+(?:\.0+)?")
_NUMBER = re.compile(r"-?\d*\.\d+|-?\d+/\d+")
# The "answer" field of the JSON object ZeroEval asks for, quoted or not, even when the JSON is malformed.
_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*(?:"([^"\n]*)"|(?=-?\d)([-\d.,]+))')
# The GSM8K paper's solutions end with a line "A: <answer>".
_A_LINE = re.compile(r"^A: (.*)$", re.MULTILINE)
# Currency signs and unit words around a number ("$20", "6 hours", "315 miles").
_UNIT = re.compile(r"^\$|\\\$|\s*[A-Za-z][A-Za-z ]*\.?$")
# MathVista: a response that opens with the option letter, "(B)", "(B) No", "B", "B."; and an integer
# stated as "the answer is 3" or alone.
_OPENS_WITH_LETTER = re.compile(r"\s*\(?([A-Z])(?:\)|\.|:|$|\s)")
_INT_ANSWER_IS = re.compile(r"answer is:?\s*\**\s*(-?\d+)(?![\d,/]|\.\d)")
_BARE_INT = re.compile(r"\s*(-?\d+)\.?\s*")
# MMMU-Pro's direct runs: a response that is only the letter ("B", "(B)", "B.").
_BARE_LETTER = re.compile(r"\s*\(?([A-J])\)?\.?\s*")
# "The answer is (D) and (H).", "answer is (A) or (B)": two letters in one statement, which the plain rules
# above read as the first; a sampled response of the fifth batch that holds one goes to a person instead (checked
# after sampling, so that the sample and its split stay as drawn).
_TWO_LETTER_STATEMENT = re.compile(r"answer is:?\s*\(?[A-J]\)?\s*(?:and|or|,|&|/)\s*\(?[A-J]\)?(?![A-Za-z0-9])")
# A \boxed{...} answer (no nested braces but one level, e.g. \boxed{\text{B}}).
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
# BBH's worked examples end "So the answer is (B)." or "So the answer is 24."; the answer must close the
# response ("the answer is (A) and (B)." or "(A) or (D)." is not one answer).
_CLOSING_LETTER_ANSWER = re.compile(r"answer is \(([A-Z])\)\.?\s*$")
_CLOSING_INT_ANSWER = re.compile(r"answer is (-?\d+)\.?\s*$")
# simple-evals' MGSM prompt: a line "Answer: 42" (bold, "$" and thousands commas allowed); any other "Answer:" line
# (words, a unit, a fraction) makes the response one for a person.
_ANSWER_LINE_ANY = re.compile(r"^\W*Answer\W*:(.*)$", re.MULTILINE | re.IGNORECASE)
_PLAIN_INT_LINE = re.compile(r"\**\s*\$?\s*(-?\d{1,3}(?:,\d{3})+|-?\d+)(?:\.0+)?\s*\**\.?\s*")
# MMMU's example runs: a response that opens with a bracketed letter or a letter and a stop ("(C) Romanticism",
# "B. 2 attendants"); a bare "A " is not one, since Qwen-VL opens sentences with the article.
_OPENS_WITH_OPTION = re.compile(r"\s*(?:\(([A-I])\)|([A-I])[.:)](?:\s|$))")


# Batches drawn afresh from earlier sources (their records keep the earlier rules), and batches whose module has its
# own plain rule.
_RESAMPLED = ((ELEVENTH_BATCH, eleventh_batch), (SEVENTEENTH_BATCH, seventeenth_batch),
              (TWENTYFIRST_BATCH, twentyfirst_batch))
_OWN_PLAIN_RULES = (((*FOURTEENTH_BATCH, *FIFTEENTH_BATCH), thoughtsource.plain_label), (SIXTEENTH_BATCH, tora.plain_label),
                    (EIGHTEENTH_BATCH, saturn_math500.plain_label), (NINETEENTH_BATCH, hinted_mmlupro.plain_label),
                    (TWENTIETH_BATCH, gaokao_bench.plain_label), (TWENTYSECOND_BATCH, llm_reasoners_dbrx.plain_label),
                    (TWENTYFOURTH_BATCH, gemini_flash_lite.plain_label), (TWENTYSIXTH_BATCH, hybrid_gsm.plain_label))


def plain_label(c: Candidate) -> tuple[str, Any, str | None]:
    """(status, label, why): status "plain" (labelled here), "hard" (a person reads it) or "skip".

    Integer answers are read from the JSON "answer" field (ZeroEval) or the final "A: ..." line (GSM8K paper).
    """
    for batch, module in _RESAMPLED:
        if c.id.startswith(batch):
            return plain_label(module.original(c))  # the same rules as its source's earlier batch
    if c.id.startswith(simple_evals_ru_more.BBH_PREFIXES):
        return simple_evals_ru_more.plain_label(c)  # before the sixth batch's "sevru-" rule, which it shares a prefix with
    if c.id.startswith(TWENTYTHIRD_BATCH):
        return _theoremqa_plain(theoremqa_2023.for_plain_rules(c))  # the tenth batch's rule, past any made-up turn
    if c.id.startswith("mathvista-"):
        return _mathvista_plain(c)
    if c.id.startswith(("qwen3-mmlupro:", "r1-mmlupro:")):
        return _thinking_plain(c)
    if c.id.startswith("mmmupro-"):
        return _mmmu_pro_plain(c)
    if c.id.startswith("bbh-"):
        return _bbh_plain(c)
    if c.id.startswith("mathv-"):
        return _math_v_plain(c)
    if c.id.startswith("sevru-"):
        return _simple_evals_plain(c)
    if c.id.startswith(SEVENTH_BATCH):
        return _mmmu_val_plain(c)
    if c.id.startswith(TENTH_BATCH):
        return _theoremqa_plain(c)
    if c.id.startswith(NINTH_BATCH):
        return _mathvista_fork_plain(c)
    if c.id.startswith((*TWELFTH_BATCH, *THIRTEENTH_BATCH)):
        return _own_answer_plain(c)
    for batch, rule in _OWN_PLAIN_RULES:
        if c.id.startswith(batch):
            return rule(c)
    if c.shape == "gpqa":
        cut = _NEXT_QUESTION.search(c.response)
        own = c.response[:cut.start()] if cut else c.response
        said = [m.group(1) for m in _ANSWER_IS.finditer(own) if m.group(1) in (c.letters or [])]
        if said and len(set(said)) == 1 and c.hint == said[0]:
            why = None
            if cut and _ANSWER_IS.search(c.response, cut.start()):
                why = ("after answering, the model writes a made-up next question and answers it too; "
                       "the label is the answer to the question asked")
            return "plain", said[0], why
        return "hard", None, None
    if c.id.startswith("r1-traces:"):
        return "hard", None, None  # few enough to read every one
    if c.id.startswith("gsm8k-paper:"):
        fields = {v.strip() for v in _A_LINE.findall(c.response)}
    else:
        fields = {(quoted or bare).strip() for quoted, bare in _ANSWER_FIELD.findall(c.response)}
    if len(fields) != 1:
        return "hard", None, None
    written = fields.pop()
    value = _UNIT.sub("", written.replace(",", "")).strip()
    if _INTEGER.fullmatch(value):
        why = None if value == written else f"answer written {written!r}, read as {int(float(value))}"
        return "plain", int(float(value)), why
    if _NUMBER.fullmatch(value):
        return "skip", None, None  # a committed non-integer: not the integer shape
    return "hard", None, None


def _mathvista_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """MathVista: plain when every answer statement names one letter (or integer) that equals the
    source's own extraction; anything else is read by a person."""
    hint = str(c.hint or "").strip()
    if c.shape == "gpqa":
        said = {m.group(1) for m in _ANSWER_IS.finditer(c.response)}
        opens = _OPENS_WITH_LETTER.match(c.response)
        if opens:
            said.add(opens.group(1))
        if len(said) == 1 and hint in said and hint in (c.letters or []):
            return "plain", hint, None
        return "hard", None, None
    said_ints = {m.group(1) for m in _INT_ANSWER_IS.finditer(c.response)}
    bare = _BARE_INT.fullmatch(c.response)
    if bare:
        said_ints.add(bare.group(1))
    if len(said_ints) == 1 and _INTEGER.fullmatch(hint) and int(float(hint)) == int(next(iter(said_ints))):
        return "plain", int(next(iter(said_ints))), None
    return "hard", None, None


def _thinking_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """A thinking model: plain when the text after its last `</think>` holds "answer is (X)" statements
    (and, for the R1 distills, whose own script also reads them, "Answer: X" lines) that all name one
    letter, equal to the source's own extraction; a response still thinking when it stops, or any other,
    is read by a person. A run whose thinking was skipped has no `</think>`: all of it is the answer."""
    cut = c.response.rfind("</think>")
    if cut < 0 and c.reasoning_model:
        return "hard", None, None
    said = {m.group(1) for m in _ANSWER_IS.finditer(c.response, max(cut, 0))}
    if c.id.startswith("r1-mmlupro:"):
        said |= {m.group(1) for m in _ANSWER_LINE.finditer(c.response, max(cut, 0))}
    if len(said) == 1 and c.hint in said and c.hint in (c.letters or []):
        return "plain", c.hint, None
    return "hard", None, None


def _answer_part(c: Candidate) -> str | None:
    """The text a reply commits to: after a thinking model's last `</think>` (None while it is still thinking), up
    to a made-up next few-shot question."""
    cut = c.response.rfind("</think>")
    if cut < 0 and c.reasoning_model:
        return None
    own = c.response[max(cut, 0):]
    nxt = _NEXT_QUESTION.search(own)
    return own[:nxt.start()] if nxt else own


def _own_answer_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """The twelfth batch: plain when every "answer is (X)" of the committed text names one letter, equal to the
    source's `pred`, and the text holds no made-up next question (a person reads those)."""
    own = _answer_part(c)
    if own is None or not c.response.rstrip().endswith(own.rstrip()):
        return "hard", None, None  # still thinking, or a made-up next question follows
    said = {m.group(1) for m in _ANSWER_IS.finditer(own)}
    if len(said) == 1 and c.hint in said and c.hint in (c.letters or []):
        return "plain", c.hint, None
    return "hard", None, None


def _mmmu_pro_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """MMMU-Pro: plain when every "Answer: X" line and "answer is (X)" (or, for a direct run, a response that
    is only a letter) names one letter, equal to the source's extraction; anything else is read by a person."""
    said = {m.group(1) for m in _ANSWER_LINE.finditer(c.response)}
    said |= {m.group(1) for m in _ANSWER_IS.finditer(c.response)}
    bare = _BARE_LETTER.fullmatch(c.response)
    if bare and c.id.startswith("mmmupro-direct:"):
        said.add(bare.group(1))
    if len(said) == 1 and c.hint in said and c.hint in (c.letters or []):
        return "plain", c.hint, None
    return "hard", None, None


def _bbh_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """BBH (Codex): the source keeps no extraction of its own, so plain means one "answer is" statement in
    the response, naming one of the question's letters (or closing the response with an integer)."""
    if c.response.count("answer is") != 1:
        return "hard", None, None
    if c.shape == "gpqa":
        closing = _CLOSING_LETTER_ANSWER.search(c.response)
        if closing and closing.group(1) in (c.letters or []):
            return "plain", closing.group(1), None
        return "hard", None, None
    closing = _CLOSING_INT_ANSWER.search(c.response)
    return ("plain", int(closing.group(1)), None) if closing else ("hard", None, None)


def _math_v_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """MATH-V: plain when the response's \\boxed{} answers (and any "answer is (X)") all give one letter, or one
    integer, equal to the source's extraction; a response with no box is read by a person."""
    boxed = [_unwrap(m.group(1)) for m in _BOXED.finditer(c.response)]
    hint = str(c.hint or "").strip()
    hint = hint.upper() if c.shape == "gpqa" and len(hint) == 1 else hint  # the source writes letters lower-case
    if not boxed:
        return "hard", None, None
    if c.shape == "gpqa":
        said = set(boxed) | {m.group(1) for m in _ANSWER_IS.finditer(c.response)}
        if len(said) == 1 and hint in said and hint in (c.letters or []):
            return "plain", hint, None
        return "hard", None, None
    if len(set(boxed)) == 1 and _INTEGER.fullmatch(boxed[0]) and _INTEGER.fullmatch(hint) \
            and int(float(boxed[0])) == int(float(hint)):
        return "plain", int(float(boxed[0])), None
    return "hard", None, None


def _simple_evals_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """simple-evals prompts (kuk/simple-evals-ru): multiple choice is plain when every "Answer: X" line and "answer is
    (X)" names one letter, equal to the source's extraction (`pred`); an integer when every "Answer:" line holds only
    one integer, equal to the extraction. Anything else is read by a person."""
    if c.shape == "gpqa":
        said = {m.group(1) for m in _ANSWER_LINE.finditer(c.response)}
        said |= {m.group(1) for m in _ANSWER_IS.finditer(c.response)}
        if len(said) == 1 and c.hint in said and c.hint in (c.letters or []):
            return "plain", c.hint, None
        return "hard", None, None
    lines = [m.group(1) for m in _ANSWER_LINE_ANY.finditer(c.response)]
    values = [_PLAIN_INT_LINE.fullmatch(v) for v in lines]
    if lines and all(values):
        ints = {int(v.group(1).replace(",", "")) for v in values}
        hint = str(c.hint or "").replace(",", "").strip()
        if len(ints) == 1 and _INTEGER.fullmatch(hint) and int(float(hint)) in ints:
            return "plain", ints.pop(), None
    return "hard", None, None


def _mmmu_val_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """MMMU's example runs: multiple choice is plain when every "answer is (X)", a reply that is only the letter and
    an opening "(X)" or "X." name one letter, equal to the source's parse; an integer when the reply is only that
    integer, equal to the parse. Anything else (Qwen-VL's sentences, mostly) is read by a person."""
    if c.shape == "gpqa":
        said = {m.group(1) for m in _ANSWER_IS.finditer(c.response)}
        bare = _BARE_LETTER.fullmatch(c.response)
        opens = _OPENS_WITH_OPTION.match(c.response)
        if bare:
            said.add(bare.group(1))
        if opens:
            said.add(opens.group(1) or opens.group(2))
        if len(said) == 1 and c.hint in said and c.hint in (c.letters or []):
            return "plain", c.hint, None
        return "hard", None, None
    bare = _BARE_INT.fullmatch(c.response)
    hint = str(c.hint or "").strip()
    if bare and _INTEGER.fullmatch(hint) and int(bare.group(1)) == int(float(hint)):
        return "plain", int(bare.group(1)), None
    return "hard", None, None


# TheoremQA's runs had no stop words: after answering, the models write a made-up next problem ("Problem:" in the
# plain prompt, "[INST]" in the Mistral one). An answer statement is the rest of its line after "answer is".
_THEOREMQA_NEXT = re.compile(r"\n\s*(?:Problem\s*:|Problem\s*\n|\[INST\])")
_THEOREMQA_STATEMENT = re.compile(r"answer is:?[ \t]*([^\n]*)")
# Its multiple-choice questions write the options "(a) ...; (b) ..."; plain is the bracketed letter alone.
_THEOREMQA_LETTER_ALONE = re.compile(r"\(([a-f])\)\.?")


def _theoremqa_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """TheoremQA: plain when the response, up to any made-up next problem, holds one "answer is" statement whose value
    is an integer (after `$`, thousands commas, a unit word and a final stop are removed) and either the source's
    extraction is that integer, or the extraction is no number at all (its ICL split often leaves it "False" or
    empty) and the statement closes the response's own part. A statement of a non-integer is left out; any other
    response (no statement, several, an extraction naming another number, text after the answer) needs a person.
    A multiple-choice response is plain when that one statement is the bracketed letter alone ("(c)", "(c).") and the
    extraction is that same "(c)"; with an option's words after it, or anything else, a person reads it."""
    cut = _THEOREMQA_NEXT.search(c.response)
    own = c.response[:cut.start()] if cut else c.response
    statements = list(_THEOREMQA_STATEMENT.finditer(own))
    if len(statements) != 1:
        return "hard", None, None
    if c.shape == "gpqa":
        alone = _THEOREMQA_LETTER_ALONE.fullmatch(statements[0].group(1).strip())
        letter = alone.group(1).upper() if alone else None
        if letter in (c.letters or []) and str(c.hint or "").strip() == alone.group(0).rstrip("."):
            return "plain", letter, None
        return "hard", None, None
    written = statements[0].group(1).strip()
    value = _UNIT.sub("", written.rstrip(".").replace(",", "").strip()).strip().strip("$").strip()
    if _NUMBER.fullmatch(value) and not _INTEGER.fullmatch(value):
        return "skip", None, None  # a committed non-integer: not the integer shape
    if not _INTEGER.fullmatch(value):
        return "hard", None, None
    said = int(float(value))
    hint = str(c.hint or "").replace(",", "").strip()
    closes = not own[statements[0].end():].strip()
    why = None if value == written else f"answer written {written!r}, read as {said}"
    if _INTEGER.fullmatch(hint):
        return ("plain", said, why) if int(float(hint)) == said else ("hard", None, None)
    if _NUMBER.fullmatch(hint):
        return "hard", None, None  # the extraction names another number
    return ("plain", said, why) if closes else ("hard", None, None)


# The ninth batch (MathVista forks): SophiaVL-R1's prompt asks for the answer inside <answer></answer>.
_ANSWER_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
# A letter given with words, "(B) No" or "B. 2 m", whose words are checked against the option texts.
_LETTER_THEN_TEXT = re.compile(r"(?:\(([A-Z])\)|\b([A-Z])[.:)])[ \t]*([^\n]{1,60})")


def _mathvista_fork_plain(c: Candidate) -> tuple[str, Any, str | None]:
    """The ninth batch: the answer statements are "answer is (X)" (or "answer is N"), \\boxed{}, an <answer> block
    holding only the letter or integer, an opening "(X)" or "X." and a reply that is only the letter or integer. Plain
    when they all give one letter (integer) equal to the owner's extraction, every box holds a letter (integer) and no
    letter comes with another option's words. A thinking model's statements count only after its last </think>; one
    that never closed its thinking goes to a person, like anything else."""
    text = c.response
    if c.reasoning_model:
        cut = text.rfind("</think>")
        if cut < 0:
            return "hard", None, None
        text = text[cut + len("</think>"):]
    blocks = [b.strip() for b in _ANSWER_BLOCK.findall(text)]
    boxed = [_unwrap(m.group(1)) for m in _BOXED.finditer(text)]
    bare_reply = re.sub(r"</?answer>", "", text).strip()
    hint = str(c.hint or "").strip()
    if c.shape == "gpqa":
        letters = c.letters or []
        if any(b not in letters for b in boxed):
            return "hard", None, None
        said = {m.group(1) for m in _ANSWER_IS.finditer(text)} | set(boxed)
        said |= {m.group(1) for m in (_BARE_LETTER.fullmatch(b) for b in [*blocks, bare_reply]) if m}
        opens = _OPENS_WITH_OPTION.match(bare_reply)
        if opens:
            said.add(opens.group(1) or opens.group(2))
        if len(said) == 1 and hint in said and hint in letters and not _fork_text_conflict(c, text):
            return "plain", hint, None
        return "hard", None, None
    if any(not _INTEGER.fullmatch(b) for b in boxed):
        return "hard", None, None
    said_ints = {int(m.group(1)) for m in _INT_ANSWER_IS.finditer(text)} | {int(float(b)) for b in boxed}
    said_ints |= {int(m.group(1)) for m in (_BARE_INT.fullmatch(b) for b in [*blocks, bare_reply]) if m}
    if len(said_ints) == 1 and _INTEGER.fullmatch(hint) and int(float(hint)) in said_ints:
        return "plain", said_ints.pop(), None
    return "hard", None, None


def _fork_text_conflict(c: Candidate, text: str) -> bool:
    """Whether a letter in the response comes with the words of another option ("(A) No" where "No" is option B)."""
    texts = [_squeeze(t)[:12] for t in c.choices or []]
    for m in _LETTER_THEN_TEXT.finditer(text):
        k, words = ord(m.group(1) or m.group(2)) - 65, _squeeze(m.group(3))
        if not words or k >= len(texts) or (texts[k] and words.startswith(texts[k])):
            continue
        if any(j != k and t and words.startswith(t) for j, t in enumerate(texts)):
            return True
    return False


# "The answer is D. <text>": the letter and the words after it (the eighth batch's check of one against the other).
_LETTER_AND_TEXT = re.compile(r"answer is:?\s*\**\(?([A-J])\)?[.:)]?\**\s+([^\n]{6,60})")


def _squeeze(text: str) -> str:
    return re.sub(r"[^\w]", "", text.lower())


def _letter_with_other_text(c: Candidate) -> bool:
    """Whether an answer statement gives a letter with the words of another option (a person reads it then). The
    texts come from the source even where the record keeps none (the eighth batch's Peru files, whose option list
    lost its first characters, so option A is matched by its tail). Checked after sampling: the sample stays as drawn."""
    texts = [_squeeze(t) for t in c.extra.get("option_texts") or []]
    for m in _LETTER_AND_TEXT.finditer(c.response):
        said, head = ord(m.group(1)) - 65, _squeeze(m.group(2))[:12]
        if len(head) < 6:
            continue
        own = texts[said] if said < len(texts) else ""
        if own and (own.startswith(head) or head[1:] in own[:13]):
            continue
        if any(k != said and len(t) >= 6 and (t.startswith(head) or head.startswith(t[:12])) for k, t in enumerate(texts)):
            return True
    return False


def _unwrap(boxed: str) -> str:
    """A box's content without LaTeX text wrappers and brackets: "\\text{(B)}" -> "B"."""
    inner = re.sub(r"\\text(?:bf)?\{([^{}]*)\}", r"\1", boxed).strip()
    return inner[1:-1].strip() if inner[:1] == "(" and inner[-1:] == ")" else inner


def _stratum(c: Candidate) -> str:
    prefix = c.id.split(":", 1)[0]
    if prefix in ELEVENTH_BATCH or prefix in SEVENTEENTH_BATCH or prefix in TWENTYFIRST_BATCH:
        return prefix  # the eleventh, seventeenth and twenty-first batches sample each source as a whole
    subset = c.extra.get("subset")  # one stratum per source file where a model has several
    return f"{prefix}:{c.model}" + (f":{subset}" if subset else "")


def _rank(key: str) -> str:
    return hashlib.sha256(f"{SEED}:{key}".encode()).hexdigest()


def _names_a_letter(c: Candidate) -> bool:
    """Whether a multiple-choice response names some option letter (a harder read than none at all)."""
    return c.shape == "gpqa" and bool(_ANSWER_IS.search(c.response) or _LETTER_MENTION.search(c.response))


def _sample_sizes(source: str, stratum: str) -> tuple[int, int]:
    """How many plain and hard responses a stratum gives: per source, but per run for the thirteenth batch."""
    if source in THIRTEENTH_BATCH:
        model = stratum.split(":", 1)[1]
        return TANAY_PLAIN.get(model, TANAY_GPT4O_PLAIN), TANAY_HARD.get(model, 0)
    return PLAIN_PER_MODEL[source], HARD_PER_MODEL[source]


def select(candidates: list[Candidate]) -> list[tuple[Candidate, str, Any, str | None, str]]:
    """A fixed, seeded sample per (source, model): plain responses and responses a person must read.

    The last field is the sample's batch: "v1" (plain and hard) or "letters" (hard responses that name
    a letter, added later with their own seed so that the first batch and its split stay as they were).
    """
    by_stratum: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if c.response.strip():
            by_stratum[_stratum(c)].append(c)
    chosen = []
    for stratum, group in sorted(by_stratum.items()):
        source = stratum.split(":", 1)[0]
        seed = eleventh_batch.SEED if source in ELEVENTH_BATCH else fifteenth_batch.SEED \
            if source in FIFTEENTH_BATCH else seventeenth_batch.SEED if source in SEVENTEENTH_BATCH \
            else twentyfirst_batch.SEED if source in TWENTYFIRST_BATCH \
            else llm_reasoners_dbrx.SEED if source in TWENTYSECOND_BATCH \
            else simple_evals_ru_more.SEED if source in TWENTYSEVENTH_BATCH else SEED
        rng = random.Random(f"{seed}:{stratum}")
        labelled = [(c, *plain_label(c)) for c in group]
        plain = [x for x in labelled if x[1] == "plain"]
        hard = [x for x in labelled if x[1] == "hard"]
        n_plain, n_hard = _sample_sizes(source, stratum)
        first = rng.sample(plain, min(n_plain, len(plain)))
        first += rng.sample(hard, min(n_hard, len(hard)))
        taken = {x[0].id for x in first}
        lettered = [x for x in hard if x[0].id not in taken and _names_a_letter(x[0])]
        rng2 = random.Random(f"{SEED}:letters:{stratum}")
        chosen += [(*x, "v1") for x in first]
        chosen += [(*x, "letters") for x in rng2.sample(lettered, min(LETTERED_PER_MODEL[source], len(lettered)))]
    return chosen


def assign_splits(ids_by_stratum: dict[str, list[str]]) -> dict[str, str]:
    """A fifth of each stratum (rounded, by a seeded hash order) is held out; the rest is tuning."""
    split = {}
    for ids in ids_by_stratum.values():
        ordered = sorted(ids, key=_rank)
        n_held = round(len(ordered) / 5)
        for k, rid in enumerate(ordered):
            split[rid] = "heldout" if k < n_held else "tuning"
    return split


def load_hand_labels() -> dict[str, dict[str, Any]]:
    out = {}
    if HAND_LABELS.exists():
        for n, line in enumerate(HAND_LABELS.read_text().splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                if row["id"] in out:
                    raise SystemExit(f"{HAND_LABELS}:{n}: id {row['id']!r} labelled twice")
                out[row["id"]] = row
    return out


def record(c: Candidate, label: Any, why: str | None, method: str, split: str) -> dict[str, Any]:
    d = asdict(c)
    extra = d.pop("extra")
    d.pop("hint")
    d["source_extracted"] = c.hint
    d["trimmed_chars"] = extra.get("dropped_chars", 0)
    d.update(label=label, why=why, label_method=method, split=split)
    if c.shape == "aime":
        d.pop("letters"), d.pop("choices")
    return d


# Each source's option and its repository; --mirrors DIR finds them all as DIR/<owner>+<name>/repo.
SOURCE_REPOS = {
    "mmlu-pro": "TIGER-AI-Lab/MMLU-Pro", "zeroeval": "WildEval/ZeroEval", "gsm8k": "openai/grade-school-math",
    "traces": "markyx316/LLM-Reasoning-Trace-Topology", "mathvista": "lupantech/MathVista",
    "qwen3-mmlu-pro": "okuvshynov/MMLU-Pro", "minimax-mmlu-pro": "shihanqu/MMLU-Pro",
    "gpt-oss-mmlu-pro": "yash-vardhansingh/MMLU-PRO", "r1-mmlu-pro": "HAOTIAN89/MMLU-Pro",
    "mmmu": "MMMU-Benchmark/MMMU",  # MMMU-Pro and the MMMU validation example runs
    "bbh": "suzgunmirac/BIG-Bench-Hard", "math-v": "mathllm/MATH-V", "llama31-mmlu-pro": "Jack-Lingjie/MMLU-Pro",
    "simple-evals-ru": "kuk/simple-evals-ru", "history-mmlu-pro": "diegonoti/MMLU-Pro",
    "theoremqa": "TIGER-AI-Lab/TheoremQA",
    "mathvista-local": "Da-Emp66/MathVistaForkForLocalModels",  # SophiaVL-R1 and InternVL3 runs
    "mathvista-internvl2": "LCL-1729/MathVistaInternEval", "mathvista-gpt4o": "chengshenge/MathVista",
    "datta-mmlu-pro": "ishaandatta/MMLU-Pro", "tanay-mmlu-pro": "tanaybaswa/mmlu-pro",
    "thoughtsource": "OpenBioLink/ThoughtSource", "tora": "microsoft/ToRA",
    "saturn": saturn_math500.REPO, "hinted-mmlu-pro": hinted_mmlupro.REPO, "gaokao": gaokao_bench.REPO,
    "llm-reasoners": llm_reasoners_dbrx.REPO, "theoremqa-2023": theoremqa_2023.REPO,
    "gemini-flash-lite": gemini_flash_lite.REPO, "hybrid-gsm": hybrid_gsm.REPO,
}
# The twenty-seventh batch reads a snapshot already named above (--simple-evals-ru).


def _needs_person(c: Candidate) -> bool:
    """Whether a plainly labelled sampled response goes to a person after all: two letters in one statement, or a letter
    given with another option's words, as each batch checks it. Checked after sampling, so the sample and its split stay
    as drawn. The seventeenth and twenty-first batches take their source's checks and the eleventh batch's on top."""
    if c.id.startswith(TWENTIETH_BATCH):
        return gaokao_bench.needs_person(c)
    if c.id.startswith(TWENTYFOURTH_BATCH):
        return gemini_flash_lite.needs_person(c)
    if c.id.startswith(TWENTYSIXTH_BATCH):
        return hybrid_gsm.needs_person(c)
    for batch, module in _RESAMPLED[1:]:
        if c.id.startswith(batch):
            again = c.shape == "gpqa" and bool(_TWO_LETTER_STATEMENT.search(c.response)
                                               or _fork_text_conflict(c, c.response))
            return again or _needs_person(module.original(c))
    if c.id.startswith((*FIFTH_BATCH, *SIXTH_BATCH, *SEVENTH_BATCH, *EIGHTH_BATCH, *NINTH_BATCH, *ELEVENTH_BATCH)) \
            and _TWO_LETTER_STATEMENT.search(c.response):
        return True
    if c.id.startswith(EIGHTH_BATCH) and _letter_with_other_text(c):
        return True
    if c.id.startswith((*TWELFTH_BATCH, *THIRTEENTH_BATCH)) \
            and (_TWO_LETTER_STATEMENT.search(_answer_part(c) or "") or _letter_with_other_text(c)):
        return True
    if c.id.startswith((*FOURTEENTH_BATCH, *FIFTEENTH_BATCH)) and thoughtsource.needs_person(c):
        return True
    if c.id.startswith(NINETEENTH_BATCH) and hinted_mmlupro.needs_person(c):
        return True
    return bool(c.id.startswith(ELEVENTH_BATCH) and _fork_text_conflict(c, c.response))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, repo in SOURCE_REPOS.items():
        ap.add_argument(f"--{flag}", type=Path, help=f"git dir of {repo} (default: under --mirrors)")
    ap.add_argument("--mirrors", type=Path,
                    help="a folder holding each snapshot as <owner>+<name>/repo (what `fetch` writes)")
    ap.add_argument("--queue", type=Path, help="write sampled responses that still need a person here")
    args = ap.parse_args(argv)
    for flag, repo in SOURCE_REPOS.items():
        attr = flag.replace("-", "_")
        if getattr(args, attr) is None:
            if args.mirrors is None:
                ap.error(f"--{flag} (git dir of {repo}) or --mirrors is required")
            setattr(args, attr, args.mirrors / repo.replace("/", "+") / "repo")
    candidates = [*mmlu_pro_candidates(args.mmlu_pro), *zeroeval_candidates(args.zeroeval),
                  *gsm_solution_candidates(args.gsm8k), *reasoning_trace_candidates(args.traces),
                  *mathvista_candidates(args.mathvista), *qwen3_mmlu_pro_candidates(args.qwen3_mmlu_pro),
                  *minimax_mmlu_pro_candidates(args.minimax_mmlu_pro),
                  *gpt_oss_mmlu_pro_candidates(args.gpt_oss_mmlu_pro),
                  *r1_distill_mmlu_pro_candidates(args.r1_mmlu_pro), *mmmu_pro_candidates(args.mmmu),
                  *bbh_candidates(args.bbh), *math_v_candidates(args.math_v),
                  *llama31_mmlu_pro_candidates(args.llama31_mmlu_pro),
                  *simple_evals_ru_candidates(args.simple_evals_ru), *mmmu_val_candidates(args.mmmu),
                  *history_mmlu_pro_candidates(args.history_mmlu_pro), *theoremqa_candidates(args.theoremqa),
                  *mathvista_local_candidates(args.mathvista_local),
                  *mathvista_internvl2_candidates(args.mathvista_internvl2),
                  *mathvista_gpt4o_candidates(args.mathvista_gpt4o),
                  *datta_mmlu_pro_candidates(args.datta_mmlu_pro), *thoughtsource.candidates(args.thoughtsource)]
    earlier = select(candidates)
    chosen = earlier + select(eleventh_batch.candidates(candidates, [x[0] for x in earlier]))
    tanay = list(tanay_mmlu_pro_candidates(args.tanay_mmlu_pro))
    chosen += select(tanay)  # after the eleventh: it sees none
    chosen += select(fifteenth_batch.candidates(args.thoughtsource, candidates, [x[0] for x in chosen]))
    tora_candidates = list(tora.candidates(args.tora))
    chosen += select(tora_candidates)  # its own strata and seeds: no earlier sample moves
    chosen += select(seventeenth_batch.candidates([*candidates, *tanay, *tora_candidates],
                                                  [x[0] for x in chosen]))  # drawn last, none sampled before
    chosen += select(list(saturn_math500.candidates(args.saturn)))  # the same: its own strata, nothing earlier moves
    chosen += select(list(hinted_mmlupro.candidates(args.hinted_mmlu_pro)))  # the same
    chosen += select(list(gaokao_bench.candidates(args.gaokao)))  # the same
    chosen += select(twentyfirst_batch.candidates([*candidates, *tanay, *tora_candidates],
                                                  [x[0] for x in chosen]))  # drawn last, none sampled before
    chosen += select(list(llm_reasoners_dbrx.candidates(args.llm_reasoners)))  # its own strata: nothing earlier moves
    chosen += select(list(theoremqa_2023.candidates(args.theoremqa_2023)))  # its own strata: nothing earlier moves
    chosen += select(list(gemini_flash_lite.candidates(args.gemini_flash_lite)))  # its own strata: none moves
    chosen += select(list(hybrid_gsm.candidates(args.hybrid_gsm)))  # its own strata: none moves
    chosen += select(list(simple_evals_ru_more.candidates(args.simple_evals_ru)))  # its own strata and seed: none moves
    hand = load_hand_labels()
    kept: list[tuple[Candidate, Any, str | None, str, str]] = []
    queue = []
    skipped = 0
    for c, status, label, why, batch in chosen:
        if c.shape == "gpqa" and len(c.letters or []) < 2:
            skipped += 1  # a damaged source item with a single option is not a choice
        elif c.id in hand and hand[c.id]["label"] == SKIP:
            skipped += 1  # read by hand and found outside the shape (e.g. a non-integer answer)
        elif c.id in hand:
            kept.append((c, hand[c.id]["label"], hand[c.id].get("why"), "read by hand", batch))
        elif status == "plain" and _needs_person(c):
            queue.append(c)  # checked after sampling, so the sample and its split stay as drawn
        elif status == "plain":
            kept.append((c, label, why, "plain rules, agreeing with the source", batch))
        else:
            queue.append(c)
    strata: dict[str, list[str]] = defaultdict(list)
    for c, *_, batch in kept:
        if not c.id.startswith(SPLIT_ON_SAMPLE):
            strata[f"{_stratum(c)}:{batch}"].append(c.id)  # per batch, so a later batch moves no earlier record
    for c, *_, batch in chosen:
        if c.id.startswith(SPLIT_ON_SAMPLE):
            strata[f"{_stratum(c)}:{batch}"].append(c.id)
    split = assign_splits(strata)
    rows: dict[str, list[dict[str, Any]]] = {"tuning": [], "heldout": []}
    for c, label, why, method, _ in kept:
        rows[split[c.id]].append(record(c, label, why, method, split[c.id]))
    for name, path in SPLIT_FILES.items():
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                       for r in sorted(rows[name], key=lambda r: r["id"]))
        path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))  # same input, same bytes
    if args.queue:
        with open(args.queue, "w", encoding="utf-8") as f:
            for c in queue:
                f.write(json.dumps({"id": c.id, "shape": c.shape, "hint": c.hint, "letters": c.letters,
                                    "choices": c.choices, "split": split.get(c.id),
                                    "response": c.response}, ensure_ascii=False) + "\n")
    print(f"tuning {len(rows['tuning'])}, heldout {len(rows['heldout'])}, waiting for a reader {len(queue)}, "
          f"left out {skipped}")


if __name__ == "__main__":
    main()
