"""run.json as a typed record (RunSpec): what a generate run was asked to do, and what makes two runs one."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from records import SCHEMA_VERSION

# Fields of run.json that must match for a rerun to continue the same run.
IDENTITY_FIELDS = ("task", "dataset_sha256", "engine_name", "model", "sampling", "seed", "samples", "item_ids", "task_options",
                   "dataset_source")
# The parts of run.json's dataset_source that name which data was asked for (paths may move; hashes cover content).
SOURCE_IDENTITY = ("hub_name", "config", "split", "commit")


def source_identity(source: dict[str, Any]) -> dict[str, Any]:
    """A resolved commit stands for the revision that named it (`@main` and `@<its commit>` are one run)."""
    out = {k: source[k] for k in SOURCE_IDENTITY if source.get(k) is not None}
    if "commit" not in out and source.get("revision") is not None:
        out["revision"] = source["revision"]
    return out


@dataclass
class RunSpec:
    """What a generate run was asked to do (run.json)."""

    task: str
    dataset_path: str
    dataset_sha256: str
    item_ids: list[str]
    samples: int
    engine_name: str
    model: str | None
    engine: dict[str, Any]
    sampling: dict[str, Any]
    seed: int
    task_options: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    dataset_source: dict[str, Any] = field(default_factory=dict)  # kind, hub name/config/split/revision/commit, ...
    created_at: str = ""
    schema_version: int = SCHEMA_VERSION

    def expected_keys(self) -> list[tuple[str, int]]:
        return [(item_id, s) for item_id in self.item_ids for s in range(self.samples)]

    def data_identity(self) -> dict[str, Any] | None:
        """What identifies the rows used (their hash, the hub commit), not how they were found; None for old runs."""
        src = self.dataset_source
        if not src.get("rows_sha256"):
            return None
        return {k: src[k] for k in ("rows_sha256", "hub_name", "commit") if src.get(k)}

    def differences(self, other: "RunSpec") -> list[str]:
        """Human-readable differences in the fields that define a run's identity."""
        out = []
        mine, theirs = self.data_identity(), other.data_identity()
        by_content = mine is not None and theirs is not None  # else (a run.json from before) the file hashes decide
        if by_content and mine != theirs:
            out.append(f"data: {json.dumps(mine, sort_keys=True)} in run.json vs {json.dumps(theirs, sort_keys=True)} now")
        for name in IDENTITY_FIELDS:
            if by_content and name in ("dataset_sha256", "dataset_source"):
                continue  # a snapshot and an Arrow cache of one commit are the same rows in other files
            a, b = getattr(self, name), getattr(other, name)
            if name == "dataset_source":
                a, b = source_identity(a), source_identity(b)
            if a != b:
                if name == "item_ids":
                    out.append(describe_item_id_change(a, b))
                else:
                    out.append(f"{name}: {json.dumps(a, sort_keys=True)} in run.json vs {json.dumps(b, sort_keys=True)} now")
        return out


def describe_item_id_change(before: list[str], now: list[str]) -> str:
    """Which item ids differ between run.json and now (not just how many), a few of each shown."""
    before_set, now_set = set(before), set(now)
    gone, new = [i for i in before if i not in now_set], [i for i in now if i not in before_set]

    def shown(ids: list[str]) -> str:
        return ", ".join(ids[:5]) + (f", ... ({len(ids)} in all)" if len(ids) > 5 else "")
    parts = ([f"only in run.json: {shown(gone)}"] if gone else []) + ([f"only now: {shown(new)}"] if new else [])
    return "item_ids: " + ("; ".join(parts) if parts else "the same ids in another order")
