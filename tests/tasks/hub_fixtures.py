"""Build, offline, the caches a one-time hub download leaves behind, using `datasets` itself.

`Dataset.push_to_hub` needs the network, so the datasets cache is made by preparing a local snapshot-like
folder (parquet shards + README.md configs) with datasets' own builder under the hub dataset's name and
commit, which is the layout `load_dataset("OWNER/NAME", CONFIG)` leaves in HF_HOME/datasets.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import datasets
import pytest
from datasets.load import dataset_module_factory, get_dataset_builder_class
from datasets.naming import camelcase_to_snakecase


def write_snapshot(folder: Path, config: str, splits: dict[str, datasets.Dataset], shards: int = 1) -> Path:
    """A hub-like repository folder: <config>/<split>-0000i-of-0000n.parquet and a README.md card naming them."""
    lines = ["---", "configs:", f"- config_name: {config}", "  data_files:"]
    for split, ds in splits.items():
        target = folder / config
        target.mkdir(parents=True, exist_ok=True)
        n = min(shards, len(ds))
        for i in range(n):
            ds.shard(n, i, contiguous=True).to_parquet(str(target / f"{split}-{i:05d}-of-{n:05d}.parquet"))
        lines += [f"  - split: {split}", f"    path: {config}/{split}-*.parquet"]
    (folder / "README.md").write_text("\n".join(lines + ["---", f"# test card for {config}", ""]))
    return folder


def add_to_datasets_cache(hf_home: Path, repo_id: str, config: str, commit: str,
                          splits: dict[str, datasets.Dataset], scratch: Path) -> Path:
    """Prepare `splits` into HF_HOME/datasets as if `load_dataset(repo_id, config)` had downloaded `commit`."""
    snapshot = write_snapshot(scratch / f"snap-{commit[:8]}-{config}", config, splits)
    module = dataset_module_factory(str(snapshot))
    short = repo_id.split("/")[1]
    kwargs = {k: v for k, v in module.builder_kwargs.items() if k != "dataset_name"}
    cache = hf_home / "datasets"
    builder = get_dataset_builder_class(module, dataset_name=short)(
        cache_dir=str(cache), dataset_name=short, config_name=config, hash=commit, **kwargs)
    builder.download_and_prepare()
    built = Path(builder.cache_dir)
    owner, snake = repo_id.split("/")[0], camelcase_to_snakecase(short)
    target = cache / f"{owner}___{snake}" / config / built.parent.name / commit
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(built), str(target))
    shutil.rmtree(cache / snake, ignore_errors=True)
    return target


def add_hub_snapshot(hf_home: Path, repo_id: str, commit: str, files: dict[str, bytes], ref: str | None = "main") -> Path:
    """HF_HOME/hub/datasets--OWNER--NAME/snapshots/<commit>/... as `hf download` leaves it, with refs/<ref>."""
    repo = hf_home / "hub" / ("datasets--" + repo_id.replace("/", "--"))
    snap = repo / "snapshots" / commit
    for rel, data in files.items():
        (snap / rel).parent.mkdir(parents=True, exist_ok=True)
        (snap / rel).write_bytes(data)
    if ref:
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snap


@pytest.fixture
def offline_hf_home(tmp_path, monkeypatch):
    """Every test here gets its own empty HF_HOME and offline mode: nothing may reach the network."""
    import datasets
    import huggingface_hub.constants

    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # datasets read these at import time, possibly before this fixture ran
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return home
