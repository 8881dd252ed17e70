"""Read a `--data` value: `hf:...` (tasks.hub_sources), or a file or folder (tasks.sources)."""
from __future__ import annotations

from pathlib import Path

from tasks.sources import HF_PREFIX, Preferences, SourceTable, local_source


def open_source(data: str | Path, prefs: Preferences) -> SourceTable:
    """The rows a `--data` value names; `PATH#NAME` picks one split/file group in a folder."""
    if str(data).startswith(HF_PREFIX):
        from tasks.hub_sources import HfSpec, hf_source  # `datasets` loads only for hub data

        return hf_source(HfSpec.parse(str(data)), prefs)
    return local_source(data, prefs)
