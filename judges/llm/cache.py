"""An append-only JSONL cache of judge verdicts, so a rerun of `grade` costs no judge calls."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "harness" / "judge"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cache_key(judge_id: str, task: str, item_id: str, sample: int, question: str, reference: str,
              response: str) -> str:
    """judge id + item + sample + response hash; question and reference hashes too, so an edited dataset
    row with the same id never reuses a stale verdict."""
    parts = [judge_id, task, item_id, str(sample), _sha(question), _sha(reference), _sha(response)]
    return _sha("\x1f".join(parts))


class VerdictCache:
    """Verdicts by key, loaded once from `path` and appended one line per new verdict."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._entries: dict[str, dict[str, Any]] | None = None
        self._torn_tail = False

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            if self.path.exists():
                with open(self.path, encoding="utf-8") as f:
                    for line in f:
                        self._torn_tail = not line.endswith("\n")
                        try:
                            entry = json.loads(line)
                            self._entries[entry["key"]] = entry["verdict"]
                        except (json.JSONDecodeError, KeyError, TypeError):
                            continue  # a torn line from a killed run: that verdict is simply asked again
        return self._entries

    def get(self, key: str) -> dict[str, Any] | None:
        return self._load().get(key)

    def put(self, key: str, verdict: dict[str, Any], item_id: str, sample: int) -> None:
        entries = self._load()
        entries[key] = verdict
        self.path.parent.mkdir(parents=True, exist_ok=True)
        prefix = "\n" if self._torn_tail else ""  # never glue a new line onto a torn one
        self._torn_tail = False
        line = prefix + json.dumps({"key": key, "item_id": item_id, "sample": sample, "verdict": verdict},
                          ensure_ascii=False) + "\n"
        # one write() on an O_APPEND descriptor, so concurrent graders never interleave a line
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    def __len__(self) -> int:
        return len(self._load())
