"""Every golden response gets exactly its expected verdict from the rules judge."""
from __future__ import annotations

import pytest

from records import GenerationRecord
from judges.rules import RulesJudge
from tests.judges.golden.aime_cases import CASES as AIME_CASES
from tests.judges.golden.gpqa_cases import CASES as GPQA_CASES

JUDGE = RulesJudge()


def _record(task: str, case: dict) -> GenerationRecord:
    meta = {"letters": case["letters"]} if "letters" in case else {}
    return GenerationRecord(
        task=task, item_id=case["id"], sample=0, messages=[{"role": "user", "content": "q"}],
        target=case["target"], response=case["response"], finish_reason=case.get("finish_reason", "stop"),
        usage={"prompt_tokens": 1, "completion_tokens": 1}, latency_s=0.0, engine={}, seed=0, meta=meta,
    )


def _check(task: str, case: dict) -> None:
    verdict = JUDGE.grade(_record(task, case))
    got = (verdict.status, verdict.extracted, verdict.correct)
    want = (case["status"], case["extracted"], case["correct"])
    assert got == want, f"{case['id']}: got {got}, want {want} (detail {verdict.detail})"


def test_tables_are_large_and_ids_unique():
    for cases in (AIME_CASES, GPQA_CASES):
        assert len(cases) >= 60
        assert len({c["id"] for c in cases}) == len(cases)


@pytest.mark.parametrize("case", AIME_CASES, ids=[c["id"] for c in AIME_CASES])
def test_aime_golden(case):
    _check("aime", case)


@pytest.mark.parametrize("case", GPQA_CASES, ids=[c["id"] for c in GPQA_CASES])
def test_gpqa_golden(case):
    _check("gpqa", case)
