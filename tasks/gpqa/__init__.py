"""GPQA: four-way multiple choice from the official CSV, options shuffled per (item, sample)."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tasks.base import Item, Prompt, Task, derive_seed
from tasks.columns import Column

LETTERS = ("A", "B", "C", "D")
ANSWER_COLUMNS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
ANSWER_FIELDS = ("correct_answer", "incorrect_answer_1", "incorrect_answer_2", "incorrect_answer_3")


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
                   '(optional: "Record ID", "High-level domain", "Subdomain"; snake_case spellings accepted)')
    # the columns of Idavidrein/gpqa (configs gpqa_diamond, gpqa_main, gpqa_extended; split train)
    columns = (
        Column("id", ("Record ID",), required=False),
        Column("question", ("Question",)),
        *(Column(f, (name,)) for f, name in zip(ANSWER_FIELDS, ANSWER_COLUMNS)),
        Column("category", ("High-level domain",), required=False),
        Column("subdomain", ("Subdomain",), required=False),
    )
    id_source = "question"
    split_order = ("gpqa_diamond", "train", "test")
    hub_configs = {"Idavidrein/gpqa": "gpqa_diamond"}
    default_file_suffix = ".csv"

    @property
    def demo_data_path(self) -> Path:
        return self.folder / "demo.csv"

    def item_from_row(self, fields: dict[str, Any], where: str) -> Item:
        answers = [str(fields[f]).strip() for f in ANSWER_FIELDS]
        category = str(fields.get("category") or "").strip() or None
        return Item(id=fields["id"], fields={"question": str(fields["question"]).strip(), "answers": answers,
                                             "subdomain": fields.get("subdomain")}, category=category)

    def export_row(self, item: Item) -> dict[str, Any]:
        return {"Record ID": item.id, "Question": item.fields["question"],
                **dict(zip(ANSWER_COLUMNS, item.fields["answers"])),
                "High-level domain": item.category or "", "Subdomain": item.fields.get("subdomain") or ""}

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
