"""`hf:OWNER/NAME[:CONFIG][@REVISION][#SPLIT]`, read from the caches a one-time download left behind.

Nothing here reaches the network: the `datasets` Arrow cache first, else the hub snapshot `hf download` made.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.errors import DataError
from tasks.sources import (HF_PREFIX, Preferences, SourceTable, choose, data_file_groups, dataset_table,
                           folder_source)

_HEX = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True)
class HfSpec:
    """`hf:OWNER/NAME[:CONFIG][@REVISION][#SPLIT]`."""

    name: str
    config: str | None = None
    revision: str | None = None
    split: str | None = None

    @classmethod
    def parse(cls, text: str) -> "HfSpec":
        body = text[len(HF_PREFIX):] if text.startswith(HF_PREFIX) else text
        body, _, split = body.partition("#")
        body, _, revision = body.partition("@")
        name, _, config = body.partition(":")
        if name.count("/") != 1 or not all(name.split("/")):
            raise DataError(f"{text!r}: expected hf:OWNER/NAME[:CONFIG][@REVISION][#SPLIT], e.g. hf:Idavidrein/gpqa:gpqa_diamond")
        return cls(name, config or None, revision or None, split or None)


def hf_home() -> Path:
    return Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface").expanduser()


def datasets_cache() -> Path:
    """Where `datasets.load_dataset` keeps prepared Arrow files (HF_DATASETS_CACHE, else HF_HOME/datasets)."""
    return Path(os.environ.get("HF_DATASETS_CACHE") or hf_home() / "datasets").expanduser()


def hub_cache() -> Path:
    """Where `hf download` keeps repository snapshots (HF_HUB_CACHE, else HF_HOME/hub)."""
    return Path(os.environ.get("HF_HUB_CACHE") or hf_home() / "hub").expanduser()


def hf_source(spec: HfSpec, prefs: Preferences) -> SourceTable:
    config = spec.config or prefs.hub_configs.get(spec.name)
    record = {"kind": "hf", "hub_name": spec.name, "config": config, "split": spec.split, "revision": spec.revision}
    arrow = _arrow_cache_entries(spec.name)
    snapshot = _hub_snapshot(spec)
    if arrow:
        try:
            return _from_arrow_cache(spec, config, arrow, prefs, record)
        except _NotInArrowCache:
            if snapshot is None:  # the Arrow cache holds this dataset, but not this config or revision
                raise
    if snapshot is not None:
        record.update(commit=snapshot.name, format="hub snapshot")
        return _snapshot_source(spec, config, snapshot, prefs, record)
    if spec.revision and (commits := cached_commits(spec.name)):
        raise DataError(f"hf:{spec.name}: revision {spec.revision!r} is not cached (cached commits: {', '.join(commits)}); "
                        + _download_hint(spec, config))
    raise DataError(_not_cached(spec, config))


def hf_label(record: dict[str, Any]) -> str:
    """`hf:cais/hle#test`, `hf:Idavidrein/gpqa:gpqa_diamond@<commit>#train`: only the parts that are known."""
    return (f"hf:{record.get('hub_name')}" + (f":{record['config']}" if record.get("config") else "")
            + (f"@{record['revision']}" if record.get("revision") else "")
            + (f"#{record['split']}" if record.get("split") else ""))


def cached_commits(name: str) -> list[str]:
    """Every commit of `name` held offline: prepared Arrow versions and hub snapshots."""
    snapshots = _hub_repo(name) / "snapshots"
    found = {p.name for p in _arrow_cache_entries(name)}
    found |= {p.name for p in snapshots.iterdir() if p.is_dir()} if snapshots.is_dir() else set()
    return sorted(found)


# Data files named after one of these are a split; any other name is a config with one split, `train`, as
# `datasets` reads a hub repository without a card (gpqa_diamond.csv is config gpqa_diamond, split train).
SPLIT_NAMES = ("train", "test", "validation", "valid", "dev", "eval", "evaluation")


def _snapshot_source(spec: HfSpec, config: str | None, snapshot: Path, prefs: Preferences, record: dict) -> SourceTable:
    """A hub snapshot: an asked config or split that is not there is an error listing what is, never a fallback."""
    entries = [(*_config_and_split(name), name) for name in sorted(data_file_groups(snapshot))]
    where = f"hf:{spec.name} hub snapshot {snapshot}"
    if spec.config:
        entries = _only(entries, 0, spec.config, where, "config")
    elif config and any(c.lower() == config.lower() for c, _, _ in entries):
        entries = [e for e in entries if e[0].lower() == config.lower()]  # the task's usual config, where present
    if spec.split:
        entries = _only(entries, 1, spec.split, where, "split")
    names = [name for _, _, name in entries]
    chosen = choose(names, [], prefs.split_order, where, "data files", how=f"hf:{spec.name}:CONFIG#SPLIT") if names else ""
    table = folder_source(snapshot, prefs, [chosen] if chosen else [], record)
    found = next(((c, s) for c, s, name in entries if name == chosen), None)
    if found:
        table.record.update(config=None if found[0] == "default" else found[0], split=found[1], file_group=chosen)
    return table


def _config_and_split(group: str) -> tuple[str, str]:
    """'cfg/test' -> (cfg, test); 'test' -> (default, test); 'gpqa_main' -> (gpqa_main, train)."""
    head, _, tail = group.rpartition("/")
    if tail.lower() in SPLIT_NAMES:
        return head or "default", tail
    return group, "train"


def _only(entries: list[tuple[str, str, str]], part: int, wanted: str, where: str, what: str) -> list[tuple[str, str, str]]:
    kept = [e for e in entries if e[part].lower() == wanted.lower()]
    if not kept:
        found = sorted({e[part] for e in entries})
        raise DataError(f"{where}: no {what} {wanted!r}; {what}s there: {', '.join(found) or 'none'}")
    return kept


def _arrow_cache_entries(name: str) -> list[Path]:
    """Prepared versions of a hub dataset: <cache>/<Owner>___<name>/<config>/<version>/<commit>/."""
    from datasets.naming import camelcase_to_snakecase

    owner, short = name.split("/")
    root = datasets_cache() / f"{owner}___{camelcase_to_snakecase(short)}"
    return [p for p in root.glob("*/*/*") if p.is_dir() and (p / "dataset_info.json").exists()]


class _NotInArrowCache(DataError):
    """The datasets cache lacks the asked config or revision (a hub snapshot may still have it)."""


def _from_arrow_cache(spec: HfSpec, config: str | None, entries: list[Path], prefs: Preferences, record: dict) -> SourceTable:
    from datasets.packaged_modules.cache.cache import Cache

    where = f"hf:{spec.name} in {datasets_cache()}"
    configs = sorted({p.parent.parent.name for p in entries})
    if config and config not in configs:
        raise _NotInArrowCache(f"{where}: config {config!r} is not cached (cached configs: {', '.join(configs)}); "
                               + _download_hint(spec, config))
    config = choose(configs, [config or ""], (), where, "cached configs", how=f"hf:{spec.name}:CONFIG")
    entries = [p for p in entries if p.parent.parent.name == config]
    if spec.revision:
        commit = _resolve_revision(spec)
        entries = [p for p in entries if p.name.startswith(commit)]
        if not entries:
            cached = ", ".join(sorted({p.name for p in _arrow_cache_entries(spec.name)}))
            raise _NotInArrowCache(f"{where}: revision {spec.revision!r} is not cached (cached commits: {cached}); "
                            + _download_hint(spec, config))
    entry = max(entries, key=lambda p: p.stat().st_mtime)  # as datasets does: the latest prepared version
    builder = Cache(cache_dir=str(datasets_cache()), dataset_name=spec.name.split("/")[1], repo_id=spec.name,
                    config_name=config, version=entry.parent.name, hash=entry.name)
    split = choose(sorted(builder.info.splits or {}), [spec.split or ""], prefs.split_order, f"{where} ({config})", "splits",
                   how=f"hf:{spec.name}:{config}#SPLIT")
    ds = builder.as_dataset(split=split)
    record.update(config=config, split=split, commit=entry.name if _HEX.match(entry.name) else None, format="datasets cache")
    return dataset_table(ds, f"hf:{spec.name}:{config}#{split}", prefs, record)


def _resolve_revision(spec: HfSpec) -> str:
    """A commit hash as given, or a branch/tag through the hub cache's refs/ (the only offline record of it)."""
    if _HEX.match(spec.revision or ""):
        return spec.revision  # type: ignore[return-value]
    ref = _hub_repo(spec.name) / "refs" / str(spec.revision)
    if ref.is_file():
        return ref.read_text().strip()
    raise DataError(f"hf:{spec.name}: cannot resolve revision {spec.revision!r} offline (no {ref}); "
                    "pin a commit hash instead: hf:OWNER/NAME[:CONFIG]@<commit>")


def _hub_repo(name: str) -> Path:
    return hub_cache() / ("datasets--" + name.replace("/", "--"))


def _hub_snapshot(spec: HfSpec) -> Path | None:
    """The snapshot folder `hf download` made for this revision (default: the one refs/main points at)."""
    snapshots = _hub_repo(spec.name) / "snapshots"
    if not snapshots.is_dir():
        return None
    if spec.revision:
        commit = _resolve_revision(spec)
        found = [p for p in snapshots.iterdir() if p.name.startswith(commit)]
        return found[0] if found else None
    main = _hub_repo(spec.name) / "refs" / "main"
    if main.is_file() and (snapshots / main.read_text().strip()).is_dir():
        return snapshots / main.read_text().strip()
    found = sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def _download_hint(spec: HfSpec, config: str | None) -> str:
    args = repr(spec.name) + (f", {config!r}" if config else "") + (f", revision={spec.revision!r}" if spec.revision else "")
    return ("the harness never downloads; on a machine with network access download it once "
            f"(gated datasets need `hf auth login` and accepted terms), e.g.\n"
            f"  python -c \"import datasets; datasets.load_dataset({args})\"\n"
            f"  or: hf download {spec.name} --repo-type dataset" + (f" --revision {spec.revision}" if spec.revision else "")
            + "\nthen point HF_HOME at that cache here, or pass --data with a local file or folder")


def _not_cached(spec: HfSpec, config: str | None) -> str:
    return (f"hf:{spec.name}: not in the local cache (looked in {datasets_cache()} and {_hub_repo(spec.name)}); "
            + _download_hint(spec, config))
