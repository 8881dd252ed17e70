"""`summary`: one table of runs x judges, Pass@1 marked not valid where coverage is incomplete."""
from __future__ import annotations

import argparse
import json

from harness.report import format_table, summary_rows

HELP = "print a table of every run and judge; Pass@1 is marked NOT VALID where coverage is incomplete"
EXAMPLES = """\
  python -m harness summary runs/*
  python -m harness summary runs/aime-demo runs/gpqa-demo --json
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+")
    p.add_argument("--json", action="store_true", help="print rows as JSON")


def run(args: argparse.Namespace) -> int:
    rows = summary_rows(args.run_dirs)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        columns = ["run", "task", "judge", "pass@1", "coverage"] + (["hle"] if any(r.get("hle") for r in rows) else [])
        print(format_table(rows, columns))
        if any("NOT VALID" in r["pass@1"] for r in rows):
            print("\nNOT VALID: coverage incomplete (missing, failed or ungraded samples); rerun generate and grade.")
    return 0
