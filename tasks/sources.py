"""Where a dataset comes from: a file, a folder (`save_to_disk` or a hub snapshot), or `hf:OWNER/NAME` in the local cache.

Nothing here reaches the network: `hf:` specs are read from the caches a one-time download left behind.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tasks.base import DataError, file_sha256
from tasks.rows import FILE_SUFFIXES, Table, read_file, table_from_dataset

HF_PREFIX = "hf:"
_SHARD = re.compile(r"^(?P<key>.+?)(?:-\d{5}-of-\d{5})?$")
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


@dataclass
class SourceTable:
    """The rows read and a record of where they came from (written to run.json as `dataset_source`)."""

    table: Table
    record: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Preferences:
    """What a task tells the loader: default configs of known hub datasets, split order, expected format."""

    expected: str
    split_order: tuple[str, ...] = ()
    hub_configs: dict[str, str] = field(default_factory=dict)
    keep: Callable[[str], bool] | None = None


def open_source(data: str | Path, prefs: Preferences) -> SourceTable:
    """Read a `--data` value: `hf:...`, a file, or a folder (`PATH#NAME` picks one split/file group in a folder)."""
    text = str(data)
    if text.startswith(HF_PREFIX):
        return _hf_source(HfSpec.parse(text), prefs)
    path, selector = Path(text), None
    if not path.exists() and "#" in text:
        head, _, selector = text.rpartition("#")
        path = Path(head)
    if path.is_dir():
        return _folder_source(path, prefs, [selector] if selector else [])
    if not path.exists():
        raise DataError(f"{path}: dataset file not found; expected {prefs.expected}")
    table = read_file(path, prefs.expected, prefs.keep)
    return SourceTable(table, {"kind": "file", "path": str(path), "files": [str(path)], "sha256": file_sha256(path)})


def files_sha256(paths: list[Path]) -> str:
    """One file: its sha256 (as before folders and hub data were accepted); several: sha256 of their sha256 lines."""
    if len(paths) == 1:
        return file_sha256(paths[0])
    lines = "".join(f"{file_sha256(p)}  {p.name}\n" for p in paths)
    return hashlib.sha256(lines.encode()).hexdigest()


# --- folders ---------------------------------------------------------------------------------------------------

def _folder_source(path: Path, prefs: Preferences, selectors: list[str], record: dict | None = None) -> SourceTable:
    record = dict(record or {"kind": "folder", "path": str(path)})
    if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
        return _saved_dataset(path, prefs, selectors, record)
    groups = data_file_groups(path)
    if not groups:
        raise DataError(f"{path}: no data file ({', '.join('*' + s for s in FILE_SUFFIXES)}) in this folder or its data/; "
                        f"expected {prefs.expected}")
    names, selectors = _narrow(sorted(groups), selectors)
    key = choose(names, selectors, prefs.split_order, f"{path}", "data files")
    files = groups[key]
    tables = [read_file(f, prefs.expected, prefs.keep) for f in files]
    columns = list(dict.fromkeys(c for t in tables for c in t.columns))
    record.update(split=key, files=[str(f) for f in files], sha256=files_sha256(files))
    return SourceTable(Table([r for t in tables for r in t.rows], columns), record)


def data_file_groups(folder: Path) -> dict[str, list[Path]]:
    """Data files by split or file name, shards joined: data/test-00000-of-00002.parquet -> "test",
    gpqa_diamond.csv -> "gpqa_diamond", cfg/train-00000-of-00001.parquet -> "cfg/train"."""
    found: dict[str, dict[str, list[Path]]] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or path.suffix.lower() not in FILE_SUFFIXES or not path.is_file():
            continue
        parts = list(rel.parent.parts)
        if parts[:1] == ["data"]:  # the hub's conventional data folder adds nothing to the name
            parts = parts[1:]
        key = "/".join([*parts, _SHARD.match(path.stem).group("key")])  # type: ignore[union-attr]
        found.setdefault(key, {}).setdefault(path.suffix.lower(), []).append(path)
    # the same data in two formats (hle.parquet and hle.jsonl): read the preferred format only
    return {key: next(by_suffix[s] for s in FILE_SUFFIXES if s in by_suffix) for key, by_suffix in found.items()}


def choose(names: list[str], selectors: list[str], preferred: tuple[str, ...], where: str, what: str,
           how: str = "") -> str:
    """The named split/config, else the only one, else the task's first preferred; ambiguity lists what was found."""
    wanted = [s for s in selectors if s]
    for s in wanted:
        if hit := _pick(names, s):
            return hit
    if wanted:
        raise DataError(f"{where}: no {' or '.join(map(repr, wanted))} among the {what} found: {', '.join(names)}")
    if len(names) == 1:
        return names[0]
    for s in preferred:
        if hit := _pick(names, s):
            return hit
    raise DataError(f"{where}: several {what} found ({', '.join(names)}); name one: {how or where + '#NAME'}")


def _pick(names: list[str], selector: str) -> str | None:
    """The name itself (any case), else the only name ending in /selector ("cfg/test" for "test")."""
    s = selector.lower()
    exact = [n for n in names if n.lower() == s]
    tail = [n for n in names if n.lower().rsplit("/", 1)[-1] == s]
    return exact[0] if exact else (tail[0] if len(tail) == 1 else None)


def _narrow(names: list[str], selectors: list[str]) -> tuple[list[str], list[str]]:
    """A selector naming a folder (a config's files) keeps only the names under it and is used up."""
    for s in selectors:
        under = [n for n in names if s and n.lower().startswith(s.lower() + "/")]
        if under:
            return under, [x for x in selectors if x != s]
    return names, selectors


def _saved_dataset(path: Path, prefs: Preferences, selectors: list[str], record: dict) -> SourceTable:
    import datasets

    try:
        loaded = datasets.load_from_disk(str(path))
    except Exception as exc:  # datasets raises several types for a damaged folder
        raise DataError(f"{path}: cannot read this save_to_disk folder ({exc})") from None
    split = None
    if isinstance(loaded, datasets.DatasetDict):
        split = choose(sorted(loaded), selectors, prefs.split_order, str(path), "splits")
        loaded = loaded[split]
    record.setdefault("kind", "folder")
    record.update(format="save_to_disk", split=split)
    return _dataset_table(loaded, f"{path}" + (f"#{split}" if split else ""), prefs, record)


def _dataset_table(ds: Any, label: str, prefs: Preferences, record: dict) -> SourceTable:
    files = [Path(f["filename"]) for f in ds.cache_files]
    record.update(fingerprint=ds._fingerprint, files=[str(f) for f in files],
                  sha256=files_sha256(files) if files else None)
    return SourceTable(table_from_dataset(ds, label, prefs.keep), record)


# --- hf:OWNER/NAME -----------------------------------------------------------------------------------------------

def hf_home() -> Path:
    return Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface").expanduser()


def datasets_cache() -> Path:
    """Where `datasets.load_dataset` keeps prepared Arrow files (HF_DATASETS_CACHE, else HF_HOME/datasets)."""
    return Path(os.environ.get("HF_DATASETS_CACHE") or hf_home() / "datasets").expanduser()


def hub_cache() -> Path:
    """Where `hf download` keeps repository snapshots (HF_HUB_CACHE, else HF_HOME/hub)."""
    return Path(os.environ.get("HF_HUB_CACHE") or hf_home() / "hub").expanduser()


def _hf_source(spec: HfSpec, prefs: Preferences) -> SourceTable:
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
    table = _folder_source(snapshot, prefs, [chosen] if chosen else [], record)
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
    return _dataset_table(ds, f"hf:{spec.name}:{config}#{split}", prefs, record)


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
