"""Whether two runs asked the same questions: by dataset fingerprint, else by each shared item's prompt and answer.

Item ids alone prove nothing: two datasets may both number their items 1..40.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from harness.rundir import RunDir, RunSpec


@dataclass
class ItemContentCheck:
    """The outcome of comparing the shared items of two runs."""

    same_dataset: bool  # the dataset fingerprints in run.json are equal: nothing more to check
    checked: int = 0  # shared items whose content both runs recorded
    differing: list[str] = field(default_factory=list)  # shared ids whose prompt or gold answer differ

    def describe(self, a: RunSpec, b: RunSpec) -> str | None:
        """None when the runs are comparable; else a sentence naming the datasets and the ids that differ."""
        if self.same_dataset:
            return None
        fa, fb = fingerprints(a, b)
        datasets = f"different datasets (sha256 {fa[:12]} vs {fb[:12]})"
        if not self.differing:
            return f"note: {datasets}, but all {self.checked} shared items checked have the same prompt and gold answer"
        shown = ", ".join(self.differing[:5]) + (", ..." if len(self.differing) > 5 else "")
        return (f"{datasets}, and {len(self.differing)} of the {self.checked} shared item ids checked hold another "
                f"question or gold answer ({shown}): a paired comparison would pair different questions")


def fingerprints(a: RunSpec, b: RunSpec) -> tuple[str, str]:
    """What identifies the rows each run used: the hash of the rows where both record it, else the dataset files'."""
    ra, rb = a.dataset_source.get("rows_sha256"), b.dataset_source.get("rows_sha256")
    return (ra, rb) if ra and rb else (a.dataset_sha256, b.dataset_sha256)


def check_item_content(a: RunDir, spec_a: RunSpec, b: RunDir, spec_b: RunSpec, items: list[str]) -> ItemContentCheck:
    """Compare the shared items' rendered prompt and gold answer when the datasets' fingerprints differ."""
    fa, fb = fingerprints(spec_a, spec_b)
    if fa == fb:
        return ItemContentCheck(same_dataset=True)
    content_a, content_b = _item_content(a, items), _item_content(b, items)
    both = [i for i in items if i in content_a and i in content_b]
    return ItemContentCheck(same_dataset=False, checked=len(both),
                            differing=[i for i in both if content_a[i] != content_b[i]])


def _item_content(run: RunDir, items: list[str]) -> dict[str, Any]:
    """Per item, the messages and target of its first finished sample (same seed and template give the same text)."""
    wanted, out = set(items), {}
    for rec in sorted(run.read_generations(), key=lambda r: r.sample):
        if rec.item_id in wanted and rec.item_id not in out and rec.finished:
            out[rec.item_id] = json.dumps([rec.messages, rec.target], sort_keys=True, ensure_ascii=False)
    return out
