"""GPQA reading is linear in the response length, and a sample past its time limit is a judge_error
with the reason while grading moves on. Timings are ratios against a baseline measured in the same test."""
from __future__ import annotations

import time

import pytest

from records import GenerationRecord
from judges.rules import RulesJudge, gpqa
from judges.rules.deadline import Deadline

SMALL = 100_000  # characters; the large response is 20 times this (2 MB)
SCALE = 20
OPTIONS = ["ethyl acetate", "methyl propanoate", "butanoic acid", "propyl formate"]

# Responses that make the reader examine every candidate position: anchors and lead-ins with no letter
# after them, lines and parentheses that each rule looks back from, option lists.
HOSTILE = {
    "answer-phrases-without-letters": "the answer is 1. ",
    "answer-words": "answer answer ",
    "newlines": "\n",
    "answer-colon-lines": "Answer:\n",
    "lead-ins": "is: ",
    "parenthesised-letters": "x (C); ",  # no commitment word, so every one is looked at
    "option-list-lines": "A) x\nB) y\n",
    "verdict-words": "is correct ",
}


def _reading_time(text: str, limit_s: float = 3600) -> float:
    """Seconds to read text, or infinity when reading passes limit_s (so quadratic code fails fast)."""
    start = time.perf_counter()
    try:
        gpqa.read_letter(text, options=OPTIONS, deadline=Deadline(limit_s))
    except gpqa.ReadFailed:
        return float("inf")
    return time.perf_counter() - start


@pytest.mark.parametrize("name", HOSTILE)
def test_reading_is_linear_in_response_length(name):
    unit = HOSTILE[name]
    small, large = unit * (SMALL // len(unit)), unit * (SMALL * SCALE // len(unit))
    _reading_time(small)  # warm up
    t_small = min(_reading_time(small) for _ in range(3))
    # Linear reading takes 15-25x as long; quadratic takes ~400x. The cap, derived from the small time
    # (never a fixed number of seconds), absorbs a loaded machine and stops a quadratic reader early.
    bound = 5 * SCALE * t_small
    t_large = _reading_time(large, bound)
    if t_large >= bound:
        t_large = _reading_time(large, bound)  # a second look before blaming the code for a busy machine
    assert t_large < bound, f"{name}: over {bound:.3f}s at 2 MB vs {t_small:.4f}s at 100 KB"


def _record(response: str, target: str = "A") -> GenerationRecord:
    return GenerationRecord(
        task="gpqa", item_id="q", sample=0, messages=[{"role": "user", "content": "q"}], target=target,
        response=response, finish_reason="stop", usage={"prompt_tokens": 1, "completion_tokens": 1},
        latency_s=0.0, engine={}, seed=0, meta={"letters": "ABCD", "choices": OPTIONS},
    )


# 560 KB of trigger words, none an anchor; the lone letter at the end can be reached from every one of them
# (no sentence punctuation between), so the reading gates (gpqa_reach.py) skip none and each is looked at.
SLOW_TO_READ = "answer answer " * 40_000 + "a"


def test_reading_past_the_time_limit_is_a_judge_error_and_the_next_sample_is_graded(monkeypatch):
    start = time.perf_counter()
    full = gpqa.read_letter(SLOW_TO_READ, options=OPTIONS, deadline=Deadline(3600))
    unlimited = time.perf_counter() - start
    assert full.letter is None  # the whole walk finds nothing

    monkeypatch.setattr(gpqa, "TIME_LIMIT_S", unlimited / 20)
    judge = RulesJudge()
    start = time.perf_counter()
    verdict = judge.grade(_record(SLOW_TO_READ))
    limited = time.perf_counter() - start
    assert (verdict.status, verdict.correct, verdict.extracted) == ("judge_error", None, None)
    assert verdict.detail["error"] == f"timed out after {unlimited / 20:g} s reading the answer"
    assert limited < unlimited / 2  # it stopped, rather than finishing and then complaining
    after = judge.grade(_record("The product is ethyl acetate.\n\nAnswer: A"))
    assert (after.status, after.correct, after.extracted) == ("graded", True, "A")
