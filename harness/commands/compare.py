"""`compare`: two runs item by item (paired statistics), or one run's judges side by side (agreement, kappa)."""
from __future__ import annotations

import argparse
import json

from harness.errors import RunDirError
from harness.judge_agreement import compare_run, format_report
from harness.paired import compare_runs, format_comparison

HELP = ("compare two runs of one task (paired difference, bootstrap CI, McNemar or sign-flip test), "
        "or the judges of one run (agreement, Cohen's kappa, every disagreement)")
EXAMPLES = """\
  python -m harness compare runs/aime-A runs/aime-B           # is B really better than A?
  python -m harness compare runs/aime-A runs/aime-B --judge rules --json
  python -m harness compare runs/aime-demo
  python -m harness compare runs/hle-M --judges rules-v11 llm-gpt-4o-1a2b3c4d --show 50
  python -m harness compare runs/gpqa-M --json > judges.json
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+", metavar="RUN",
                   help="two run directories of one task (paired comparison), or one run graded by two or more judges; "
                        "DIR of `grade RUN --out DIR` stands for RUN with the grades in DIR")
    p.add_argument("--judges", nargs="+", help="one run: judges to compare, by full id (rules-v11) or short name (rules) (default: every judge of the run)")
    p.add_argument("--judge", help="two runs: the judge whose grades are compared, by full id or short name (default: the one both runs share)")
    p.add_argument("--seed", type=int, default=0, help="two runs: seed of the bootstrap and permutation draws (default: %(default)s)")
    p.add_argument("--show", type=int, default=20, help="disagreements listed per pair in the table (default 20)")
    p.add_argument("--json", action="store_true", help="print everything as JSON, every disagreement included")
    p.add_argument("--allow-different-data", action="store_true",
                   help="two runs: compare even when shared item ids hold different questions (prints a warning)")


def run(args: argparse.Namespace) -> int:
    if len(args.run_dirs) == 2:
        result = compare_runs(args.run_dirs[0], args.run_dirs[1], args.judge, seed=args.seed,
                              allow_different_data=args.allow_different_data)
        print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else format_comparison(result))
        return 0
    if len(args.run_dirs) != 1:
        raise RunDirError(f"compare takes one run (its judges) or two runs (paired), got {len(args.run_dirs)}")
    report = compare_run(args.run_dirs[0], args.judges)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_report(report, max(0, args.show)))
    return 0
