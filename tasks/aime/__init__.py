"""AIME: integer answers 0-999, JSONL input, graded on the last committed \\boxed{} answer."""
from __future__ import annotations

import json
from pathlib import Path

from tasks.base import DataError, Item, Prompt, Task

REQUIRED = ("id", "problem", "answer")


class AimeTask(Task):
    name = "aime"
    default_samples = 32  # as in the reference release: 30 problems x 32 samples
    default_data_path = "data/aime/aime_2026.jsonl"
    default_judge = "rules"
    data_format = 'JSONL, one object per line with fields "id", "problem", "answer" (integer or string such as "025")'

    @property
    def demo_data_path(self) -> Path:
        return self.folder / "demo.jsonl"

    def load(self, path: Path) -> list[Item]:
        items: list[Item] = []
        seen: set[str] = set()
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{where}: not valid JSON ({exc.msg}); expected {self.data_format}") from None
                if not isinstance(row, dict):
                    raise DataError(f"{where}: expected a JSON object; expected {self.data_format}")
                missing = [k for k in REQUIRED if k not in row or row[k] in (None, "")]
                if missing:
                    raise DataError(f"{where}: missing field(s) {', '.join(missing)}; expected {self.data_format}")
                item_id = str(row["id"])
                if item_id in seen:
                    raise DataError(f"{where}: duplicate id {item_id!r}")
                seen.add(item_id)
                answer = str(row["answer"]).strip()
                if not answer.lstrip("-").isdigit():
                    raise DataError(f"{where}: field answer must be an integer, got {row['answer']!r}")
                fields = {"problem": str(row["problem"]), "answer": answer}
                items.append(Item(id=item_id, fields=fields, category=row.get("category")))
        if not items:
            raise DataError(f"{path}: no items; expected {self.data_format}")
        return items

    def render(self, item: Item, sample: int, run_seed: int) -> Prompt:
        text = self.template("prompt.jinja").render(problem=item.fields["problem"])
        return Prompt(messages=[{"role": "user", "content": text}], target=item.fields["answer"])
