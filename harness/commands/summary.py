"""`summary`: one table of runs x judges, Pass@1 marked not valid where coverage is incomplete."""
from __future__ import annotations

import argparse
import json

from harness.errors import RunDirError
from harness.report.text import PASS1_INTERVAL, display_rows, format_table, summary_records, warn_skipped

HELP = "print a table of every run and judge; Pass@1 is marked NOT VALID where coverage is incomplete"
EXAMPLES = """\
  python -m harness summary runs/*
  python -m harness summary runs/aime-demo runs/gpqa-demo --by category
  python -m harness summary runs/aime-demo --json          # numbers as fractions (0.1875 = 18.8%)
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+", metavar="RUN", help="run directories (or DIR of `grade RUN --out DIR`); other paths are skipped with a warning")
    p.add_argument("--by", choices=("category",), help="one row per category of each run and judge (default: one row per run and judge)")
    p.add_argument("--json", action="store_true", help="print rows as JSON numbers (fractions, not percent)")


def run(args: argparse.Namespace) -> int:
    records, skipped = summary_records(args.run_dirs, args.by)
    for message in skipped:
        warn_skipped(message)
    if args.json:
        if not records and skipped:
            raise RunDirError("no run directory among the arguments")
        print(json.dumps(records, indent=2))
        return 0
    rows = display_rows(records)
    if not rows:
        raise RunDirError("no run directory among the arguments")
    columns = ["run", "task", "model", "engine", "samples", "judge"] + (["category", "items"] if args.by else []) \
        + ["pass@1", "coverage"] + (["hle"] if any(r.get("hle") for r in rows) else [])
    print(format_table(rows, columns, {"pass@1": f"pass@1 ± {PASS1_INTERVAL}"}))
    # the same test that marks a row NOT VALID (format_pass1): a graded row without full coverage
    if any(r["judge"] and r["pass@1"] is not None and not r["coverage_complete"] for r in records):
        print("\nNOT VALID: coverage incomplete (missing, failed or ungraded samples); rerun generate and grade.")
    return 0
