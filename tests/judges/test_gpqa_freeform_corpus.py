"""The rules judge on the free-form GPQA corpus: letters stated in any phrasing, read as a careful reader reads them.

Measure the figure quoted in docs/grading.md with:
    python -m pytest -q -s tests/judges/test_gpqa_freeform_corpus.py
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from records import GenerationRecord
from judges.rules import RulesJudge

CORPUS = Path(__file__).parent / "golden" / "gpqa_freeform.jsonl"
TARGET = 0.99


def load_corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def record_for(case: dict, with_choices: bool = True) -> GenerationRecord:
    meta = {"letters": "ABCD", "choices": case["options"]} if with_choices else {"letters": "ABCD"}
    return GenerationRecord(
        task="gpqa", item_id=case["id"], sample=0, messages=[{"role": "user", "content": "q"}],
        target=case["target"], response=case["response"], finish_reason=case["finish_reason"],
        usage={"prompt_tokens": 1, "completion_tokens": 1}, latency_s=0.0, engine={}, seed=0, meta=meta,
    )


def reading_of(verdict) -> str | None:
    """What the judge read, in the corpus's terms: a letter, None (no answer) or "ambiguous"."""
    if verdict.status == "ambiguous":
        return "ambiguous"
    return verdict.extracted if verdict.status == "graded" else None


def measure(judge, cases: list[dict]) -> tuple[float, list[tuple[str, object, object]]]:
    misses = []
    for case in cases:
        got = reading_of(judge.grade(record_for(case)))
        if got != case["expected"]:
            misses.append((case["id"], case["expected"], got))
    return 1 - len(misses) / len(cases), misses


def test_corpus_is_large_varied_and_consistent():
    cases = load_corpus()
    assert len(cases) >= 300
    assert len({c["id"] for c in cases}) == len(cases)
    kinds = Counter(c["kind"] for c in cases)
    assert kinds["handwritten"] >= 60 and len(kinds) >= 10
    for c in cases:
        assert len(c["options"]) == 4 and c["target"] in "ABCD"
        assert c["expected"] in ("A", "B", "C", "D", None, "ambiguous")


def test_rules_judge_reads_the_free_form_corpus():
    cases = load_corpus()
    accuracy, misses = measure(RulesJudge(), cases)
    print(f"\nGPQA free-form corpus: {accuracy:.1%} of {len(cases)} responses read as expected "
          f"({len(misses)} misses)")
    for miss in misses:
        print("  miss:", miss)
    assert accuracy >= TARGET, misses


def test_correctness_follows_the_reading():
    # A read letter is correct exactly when it is the gold letter; no answer and ambiguous are never correct.
    judge = RulesJudge()
    for case in load_corpus():
        verdict = judge.grade(record_for(case))
        if verdict.status == "graded":
            assert verdict.correct is (verdict.extracted == case["target"]), case["id"]
        else:
            assert verdict.correct is False, case["id"]
