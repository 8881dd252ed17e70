"""GPQA: four-way multiple choice from the official CSV, options shuffled per (item, sample)."""
from __future__ import annotations

import csv
import random
from pathlib import Path

from tasks.base import DataError, Item, Prompt, Task, derive_seed

LETTERS = ("A", "B", "C", "D")
ANSWER_COLUMNS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
REQUIRED = ("Question", *ANSWER_COLUMNS)


def choice_permutation(run_seed: int, item_id: str, sample: int) -> list[int]:
    """Order of the four answers (0 = correct) for one sample; a pure function of its inputs."""
    order = [0, 1, 2, 3]
    random.Random(derive_seed(run_seed, item_id, sample)).shuffle(order)
    return order


class GpqaTask(Task):
    name = "gpqa"
    default_samples = 8  # as in the reference release: 198 questions x 8 samples
    default_data_path = "data/gpqa/gpqa_diamond.csv"
    default_judge = "rules"
    data_format = ('the official GPQA CSV with a header row and columns "Question", "Correct Answer", '
                   '"Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3" '
                   '(optional: "Record ID", "High-level domain", "Subdomain")')

    @property
    def demo_data_path(self) -> Path:
        return self.folder / "demo.csv"

    def load(self, path: Path) -> list[Item]:
        items: list[Item] = []
        seen: set[str] = set()
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            absent = [c for c in REQUIRED if c not in header]
            if absent:
                raise DataError(f"{path}:1: header lacks column(s) {', '.join(absent)}; expected {self.data_format}")
            for row in reader:
                # reader.line_num is the physical line where this row ended (rows may span lines)
                where = f"{path}:{reader.line_num}"
                if None in row or any(v is None for v in row.values()):
                    raise DataError(f"{where}: row has {len(header)} columns expected, got a different number")
                empty = [c for c in REQUIRED if not row[c].strip()]
                if empty:
                    raise DataError(f"{where}: empty field(s) {', '.join(empty)}; expected {self.data_format}")
                item_id = (row.get("Record ID") or "").strip() or f"row{len(items) + 1}"
                if item_id in seen:
                    raise DataError(f"{where}: duplicate Record ID {item_id!r}")
                seen.add(item_id)
                fields = {"question": row["Question"].strip(), "answers": [row[c].strip() for c in ANSWER_COLUMNS]}
                category = (row.get("High-level domain") or "").strip() or None
                items.append(Item(id=item_id, fields=fields, category=category))
        if not items:
            raise DataError(f"{path}: no rows; expected {self.data_format}")
        return items

    def render(self, item: Item, sample: int, run_seed: int) -> Prompt:
        order = choice_permutation(run_seed, item.id, sample)
        answers = item.fields["answers"]
        choices = [(LETTERS[pos], answers[src]) for pos, src in enumerate(order)]
        gold = LETTERS[order.index(0)]
        text = self.template("prompt.jinja").render(question=item.fields["question"], choices=choices, letters=LETTERS)
        # The shown option texts let a judge read an answer given in words (judges/rules/gpqa_options.py).
        meta = {"permutation": order, "gold_letter": gold, "letters": "".join(LETTERS),
                "choices": [choice for _, choice in choices]}
        return Prompt(messages=[{"role": "user", "content": text.rstrip()}], target=gold, meta=meta)
