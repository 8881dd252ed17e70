"""Humanity's Last Exam: free-form and multiple-choice questions, some with an image, graded by a model."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tasks.base import DataError, Item, Prompt, Task
from tasks.hle.loader import COLUMNS, FORMAT, hle_fields
from tasks.hle.metrics import hle_metrics
from tasks.hle.prompts import DEFAULT_PROMPT, HLE_PROMPTS, official_system_prompt

SUBSETS = ("all", "text", "image")


class HleTask(Task):
    """HLE with one sample per question; `subset` keeps all, text-only or image questions; `prompt` picks
    the system prompt (official HLE wording or the harness's)."""

    name = "hle"
    default_samples = 1
    default_data_path = "data/hle"  # a folder holding one .parquet/.jsonl (or its hub snapshot layout)
    default_judge = "llm"
    data_format = FORMAT
    columns = COLUMNS
    id_source = "question"
    split_order = ("test",)

    def __init__(self, subset: str = "all", prompt: str = DEFAULT_PROMPT) -> None:
        if subset not in SUBSETS:
            raise DataError(f"unknown HLE subset {subset!r}; valid subsets: {', '.join(SUBSETS)}")
        if prompt not in HLE_PROMPTS:
            raise DataError(f"unknown HLE prompt {prompt!r}; valid prompts: {', '.join(HLE_PROMPTS)}")
        self.subset = subset
        self.prompt = prompt
        self._meta_by_id: dict[str, dict[str, Any]] = {}

    @property
    def demo_data_path(self) -> Path:
        return self.folder / "demo.jsonl"

    def item_from_row(self, fields: dict[str, Any], where: str) -> Item | None:
        row = hle_fields(fields, where)
        has_image = bool(row["image"])
        if (self.subset == "text" and has_image) or (self.subset == "image" and not has_image):
            return None
        self._meta_by_id[row["id"]] = {"category": row["category"] or None, "has_image": has_image,
                                       "answer_type": row["answer_type"]}
        return Item(id=row["id"], fields={**row, "has_image": has_image}, category=row["category"] or None)

    def _empty_reason(self) -> str:
        return f" in subset {self.subset!r}"

    def export_row(self, item: Item) -> dict[str, Any]:
        return {c.field: item.fields.get(c.field, "") for c in COLUMNS}

    def render(self, item: Item, sample: int, run_seed: int) -> Prompt:
        f = item.fields
        if self.prompt == "official":
            system = official_system_prompt(f["answer_type"])
        else:
            system = self.template("system.jinja").render(answer_type=f["answer_type"])
        if f["image"]:
            # OpenAI content parts: the question text, then the image as a data URI
            user: Any = [{"type": "text", "text": f["question"]},
                         {"type": "image_url", "image_url": {"url": f["image"]}}]
        else:
            user = f["question"]
        return Prompt(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            target=f["answer"],
            meta={"answer_type": f["answer_type"], "has_image": bool(f["image"]), "raw_subject": f["raw_subject"]},
        )

    def run_options(self) -> dict[str, Any]:
        return {"subset": self.subset, "prompt": self.prompt}

    def summary_metrics(self, grades: list, records: list, expected_keys: list[tuple[str, int]]) -> dict[str, Any]:
        return {"subset": self.subset, **hle_metrics(grades, records, expected_keys, self._meta_by_id)}
