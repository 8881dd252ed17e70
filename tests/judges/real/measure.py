"""Runs today's rules readers over a split of the real-output corpus and counts how they read it.

    python -m tests.judges.real.measure [--split tuning|heldout|all] [--by model|source|family]
                                        [--source PREFIX] [--show wrong,miss,false]

correct: the reader's answer equals the label (or both are none); wrong: a different letter or integer
(a silent wrong answer); miss: no answer where the label has one; false: an answer where the label is none;
error: the reader raised or passed its time limit.
A record of a model that writes its thinking into the response and never closed it is read as cut off
(`cut_off=True` to either reader), what the grade stage learns from finish_reason "length".
"""
from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.rules import aime, gpqa

HERE = Path(__file__).parent
SPLITS = ("tuning", "heldout")
OUTCOMES = ("correct", "wrong", "miss", "false", "error")


def corpus_path(split: str) -> Path:
    return HERE / f"corpus_{split}.jsonl.gz"


def load(split: str) -> list[dict[str, Any]]:
    """Records of one split ("tuning", "heldout") or of both ("all")."""
    names = SPLITS if split == "all" else (split,)
    rows: list[dict[str, Any]] = []
    for name in names:
        with gzip.open(corpus_path(name), "rt", encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def cut_off_in_thinking(rec: dict[str, Any]) -> bool:
    """What the grade stage learns from finish_reason "length", which the sources do not keep: a model that
    writes its thinking into the response and never closed it was stopped by the token limit. One that closed the
    <answer> block its prompt asked for (SophiaVL-R1 now and then skips the think tags) stopped on its own."""
    return (bool(rec.get("reasoning_model")) and "hidden" not in rec["asked_format"]
            and "</think" not in rec["response"] and "</answer>" not in rec["response"])


def read(rec: dict[str, Any]) -> Any:
    """What the rules reader takes from the response: a letter, an integer, or None."""
    if rec["shape"] == "gpqa":
        reading = gpqa.read_letter(rec["response"], tuple(rec["letters"]), rec.get("choices"),
                                   cut_off=cut_off_in_thinking(rec))
        return None if reading.ambiguous else reading.letter
    # An AIME answer is an integer: answer text with no integer value counts as no answer.
    return aime.read_aime(rec["response"], cut_off=cut_off_in_thinking(rec)).value


def outcome(label: Any, got: Any) -> str:
    if got == label:
        return "correct"
    if label is None:
        return "false"
    return "miss" if got is None else "wrong"


@dataclass
class Result:
    rec: dict[str, Any]
    got: Any
    outcome: str


def measure(records: Iterable[dict[str, Any]]) -> Iterator[Result]:
    for rec in records:
        try:
            got = read(rec)
        except (gpqa.ReadFailed, aime.ReadFailed) as exc:
            yield Result(rec, str(exc), "error")
            continue
        yield Result(rec, got, outcome(rec["label"], got))


def _group_key(rec: dict[str, Any], by: str) -> str:
    source = rec["id"].split(":", 1)[0]
    if by == "source":
        return source
    if by == "family":
        return f"{source}:{rec['family']}"
    return f"{source}:{rec['model']}"


def table(results: list[Result], by: str) -> str:
    groups: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        groups[_group_key(r.rec, by)][r.outcome] += 1
        groups["TOTAL"][r.outcome] += 1
    width = max(len(k) for k in groups)
    lines = [f"{'group':<{width}}  {'n':>5}  " + "  ".join(f"{o:>7}" for o in OUTCOMES)]
    for key in sorted(groups, key=lambda k: (k == "TOTAL", k)):
        c = groups[key]
        lines.append(f"{key:<{width}}  {sum(c.values()):>5}  " + "  ".join(f"{c[o]:>7}" for o in OUTCOMES))
    total = groups["TOTAL"]
    n = sum(total.values()) or 1
    lines.append(f"wrong {100 * total['wrong'] / n:.2f}%  miss {100 * total['miss'] / n:.2f}%  "
                 f"false {100 * total['false'] / n:.2f}%  error {100 * total['error'] / n:.2f}%  (n={n})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=(*SPLITS, "all"), default="tuning")
    ap.add_argument("--by", choices=("model", "source", "family"), default="model")
    ap.add_argument("--source", help="only records whose id starts with this (e.g. mmlupro, r1-traces)")
    ap.add_argument("--show", default="", help="comma-separated outcomes whose records to print (tail of response)")
    args = ap.parse_args(argv)
    records = [r for r in load(args.split) if not args.source or r["id"].startswith(args.source)]
    results = list(measure(records))
    print(f"split: {args.split}")
    print(table(results, args.by))
    shown = set(filter(None, args.show.split(",")))
    for r in results:
        if r.outcome in shown:
            print(f"\n--- {r.outcome}: {r.rec['id']} label={r.rec['label']!r} read={r.got!r} why={r.rec.get('why')!r}")
            print(r.rec["response"][-800:])


if __name__ == "__main__":
    main()
