"""rules+llm: the rules judge grades every sample; only the samples it cannot read go to the LLM judge.

A sample is sent on when the rules judge finds no answer (`no_answer`) or one that contradicts itself
(`ambiguous`) in a response that ended normally. A response cut at its token limit is not sent: it stays
`truncated`, as with the rules judge alone, because an answer the model never finished is not one to
grade. Each verdict says which judge decided it (`detail.decided_by`).
"""
from __future__ import annotations

from typing import Any

from judges.base import Judge, Verdict
from records import GenerationRecord

SENT_TO_LLM = ("no_answer", "ambiguous")


class HybridJudge(Judge):
    """Rules first, an LLM judge for what the rules cannot read; the id names both parts and their versions."""

    is_async = True

    def __init__(self, rules: Judge, llm: Judge) -> None:
        self.rules, self.llm = rules, llm
        self.tasks = rules.tasks  # the rules judge must read every sample first
        # never the folder of either pure judge, and a new one whenever either part changes
        self.judge_id = f"hybrid-{rules.judge_id}-{llm.judge_id}"

    @classmethod
    def from_options(cls, **options: Any) -> "HybridJudge":
        from judges.llm import LLMJudge
        from judges.rules import RulesJudge

        return cls(RulesJudge.from_options(**options), LLMJudge.from_options(**options))

    def config(self) -> dict[str, Any]:
        return {"name": "rules+llm", "judge_id": self.judge_id, "sent_to_llm": list(SENT_TO_LLM),
                "truncated_sent_to_llm": False, "rules": self.rules.config(), "llm": self.llm.config()}

    def bind_grades_dir(self, grades_dir: Any) -> None:
        """The LLM part's verdict cache lives in this judge's own folder."""
        bind = getattr(self.llm, "bind_grades_dir", None)
        if bind is not None:
            bind(grades_dir)

    async def agrade(self, record: GenerationRecord) -> Verdict:
        try:
            first = await self.rules.agrade(record)
        except Exception as exc:  # a rules bug on one response: that sample is a judge_error, the rest go on
            return Verdict(None, None, "judge_error", {"error": f"{type(exc).__name__}: {exc}", "decided_by": "rules"})
        if first.status not in SENT_TO_LLM or record.finish_reason != "stop":
            return Verdict(first.correct, first.extracted, first.status, {**first.detail, "decided_by": "rules"})
        second = await self.llm.agrade(record)
        rules_reading = {"status": first.status, **first.detail}
        return Verdict(second.correct, second.extracted, second.status,
                       {**second.detail, "decided_by": "llm", "rules": rules_reading})

    async def aclose(self) -> None:
        await self.rules.aclose()
        await self.llm.aclose()
