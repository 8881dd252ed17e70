"""AIME: integer answers 0-999, JSONL input, graded on the last committed \\boxed{} answer."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tasks.base import DataError, Item, Prompt, Task
from tasks.columns import Column


class AimeTask(Task):
    name = "aime"
    default_samples = 32  # as in the reference release: 30 problems x 32 samples
    default_data_path = "data/aime/aime_2026.jsonl"
    default_judge = "rules"
    data_format = ('JSONL, one object per line with fields "id" (optional), "problem" (or "question"), '
                   '"answer" (integer or string such as "025"); hub variants: ID/Problem/Answer, problem_idx')
    # Maxwell-Jia/AIME_2024: ID, Problem, Answer; math-ai/aime25: id, problem, answer;
    # opencompass/AIME2025: question, answer (no id); MathArena exports: problem_idx, problem, answer
    columns = (
        Column("id", ("id", "ID", "problem_idx", "url"), required=False),
        Column("problem", ("problem", "question", "Problem")),
        Column("answer", ("answer", "Answer")),
        Column("category", ("category",), required=False),
    )
    id_source = "problem"
    split_order = ("test", "train")

    @property
    def demo_data_path(self) -> Path:
        return self.folder / "demo.jsonl"

    def item_from_row(self, fields: dict[str, Any], where: str) -> Item:
        answer = str(fields["answer"]).strip()
        if not answer.lstrip("-").isdigit():
            raise DataError(f"{where}: field answer must be an integer, got {fields['answer']!r}")
        return Item(id=fields["id"], fields={"problem": str(fields["problem"]), "answer": answer},
                    category=fields.get("category") or None)

    def export_row(self, item: Item) -> dict[str, Any]:
        row = {"id": item.id, "problem": item.fields["problem"], "answer": item.fields["answer"]}
        return {**row, "category": item.category} if item.category else row

    def render(self, item: Item, sample: int, run_seed: int) -> Prompt:
        text = self.template("prompt.jinja").render(problem=item.fields["problem"])
        return Prompt(messages=[{"role": "user", "content": text}], target=item.fields["answer"])
