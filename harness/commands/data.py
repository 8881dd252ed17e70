"""`data show|prepare`: see what a dataset source will evaluate, or write it out as the task's default file."""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from harness.generate import load_task_data
from tasks import TASKS, DataError, LoadedDataset, Task, file_sha256, get_task

HELP = "show a dataset as a task reads it (items, columns, example prompts, hash), or prepare its default file"
EXAMPLES = """\
  python -m harness data show gpqa --data hf:Idavidrein/gpqa:gpqa_diamond
  python -m harness data show aime --data data/aime/aime25.jsonl
  python -m harness data show hle --data ~/hle-snapshot#test --subset image
  python -m harness data prepare gpqa --data hf:Idavidrein/gpqa:gpqa_diamond --out data/gpqa/gpqa_diamond.csv
  python -m harness data prepare aime --data hf:math-ai/aime25 --out data/aime/aime_2025.jsonl
"""
EXAMPLES_SHOWN = 3
TEXT_LIMIT = 1500  # characters of one message shown; enough to check a template, short enough to read


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="items, columns used, three rendered example prompts and the dataset hash")
    prepare = sub.add_parser("prepare", help="write the dataset in the task's default format (AIME/HLE JSONL, GPQA CSV)")
    for q in (show, prepare):
        q.add_argument("task", help=f"one of: {', '.join(sorted(TASKS))}")
        q.add_argument("--data", help="file, folder[#SPLIT] or hf:OWNER/NAME[:CONFIG][@REVISION][#SPLIT] "
                       "(default: the task's documented path, else its demo set)")
        q.add_argument("--subset", help="task subset where the task has one (HLE: all|text|image)")
    show.add_argument("--seed", type=int, default=0, help="run seed used to render the examples (GPQA shuffle)")
    prepare.add_argument("--out", required=True, help="file to write; .jsonl, .csv or .parquet (default format: the task's)")
    prepare.add_argument("--force", action="store_true", help="overwrite --out if it exists")


def run(args: argparse.Namespace) -> int:
    task = get_task(args.task, **({"subset": args.subset} if args.subset else {}))
    data, dataset = load_task_data(task, args.data)
    if args.action == "show":
        print(describe(task, dataset, args.seed))
        return 0
    out = prepare(task, dataset, Path(args.out), args.force)
    print(f"wrote {len(dataset.items)} items to {out} (sha256 {file_sha256(out)}); "
          f"source: {source_line(dataset.source)}")
    return 0


def source_line(source: dict[str, Any]) -> str:
    if source.get("kind") == "hf":
        parts = [f"hf:{source['hub_name']}", *([f"config {source['config']}"] if source.get("config") else []),
                 f"split {source.get('split')}"]
        if source.get("revision"):
            parts.append(f"revision {source['revision']}")
        parts.append(f"commit {source.get('commit') or 'unknown'}")
        return ", ".join(parts) + f" ({source.get('format')})"
    extra = [f"split {source['split']}"] if source.get("split") else []
    extra += [source["format"]] if source.get("format") else []
    return f"{source.get('path')} ({', '.join([source.get('kind', '?'), *extra])})"


def describe(task: Task, dataset: LoadedDataset, seed: int) -> str:
    src = dataset.source
    lines = [f"task:        {task.name}",
             f"source:      {source_line(src)}",
             f"items:       {len(dataset.items)}",
             "columns:     " + ", ".join(f"{f} <- {c}" for f, c in src["columns"].items()),
             f"ids:         {src['id_rule']}",
             f"sha256:      {src.get('sha256')}"]
    if src.get("fingerprint"):
        lines.append(f"fingerprint: {src['fingerprint']}")
    for n, item in enumerate(dataset.items[:EXAMPLES_SHOWN], 1):
        prompt = task.render(item, 0, seed)
        lines += ["", f"--- example {n}: id {item.id}, category {item.category or '-'}, target {prompt.target!r} ---"]
        lines += [f"[{m['role']}] {_content_text(m['content'])}" for m in prompt.messages]
    return "\n".join(lines)


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # OpenAI content parts: show an image by its type and size, not its base64
        parts = []
        for part in content:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                parts.append(f"<image {url.split(';', 1)[0][5:]}, {len(url)} characters as a data URI>")
            else:
                parts.append(part.get("text", ""))
        content = "\n".join(parts)
    text = str(content)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + f"... [{len(text) - TEXT_LIMIT} more characters]"


def prepare(task: Task, dataset: LoadedDataset, out: Path, force: bool) -> Path:
    """Write the items as the task's default file (or the format --out's suffix names), atomically."""
    suffix = out.suffix.lower() or task.default_file_suffix
    if suffix not in (".jsonl", ".csv", ".parquet"):
        raise DataError(f"{out}: unsupported output type {suffix!r}; use .jsonl, .csv or .parquet")
    out = out.with_suffix(suffix)
    if out.exists() and not force:
        raise DataError(f"{out}: already exists; pass --force to overwrite")
    rows = [task.export_row(item) for item in dataset.items]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    if suffix == ".jsonl":
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    elif suffix == ".csv":
        import pandas as pd

        pd.DataFrame(rows).to_csv(tmp, index=False)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), tmp)
    os.replace(tmp, out)
    return out
