"""`report`: a static HTML report of runs, judges and sweeps that opens from file:// or any static host."""
from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write a static HTML report (overview, per-category and per-item tables, sample viewer, HLE, sweeps)"
EXAMPLES = """\
  python -m harness report runs/* sweeps/* -o report/
  python -m harness report runs/aime-A runs/aime-B -o /tmp/ab && xdg-open /tmp/ab/index.html
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="RUN_OR_SWEEP",
                   help="run directories (or DIR of `grade RUN --out DIR`), sweep folders (with results.jsonl), "
                        "or folders holding either")
    p.add_argument("-o", "--out", default="report",
                   help="output folder; index.html goes there; a rebuild replaces only the files a report wrote "
                        "(default: %(default)s)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty folder that is not a report (beside its files; none is deleted)")


def run(args: argparse.Namespace) -> int:
    from harness.report.build import build_report  # jinja2 and the sweep plotter load only for this verb
    from harness.report.text import plural, warn_skipped

    out = Path(args.out)
    result = build_report(args.paths, out, force=args.force)
    for message in result["skipped"]:
        warn_skipped(message)
    print(f"wrote {out / 'index.html'}: {plural(result['runs'], 'run')} ({plural(result['samples'], 'sample')}), "
          f"{plural(result['sweeps'], 'sweep')}")
    return 0
