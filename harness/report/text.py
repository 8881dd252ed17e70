"""Plain-text tables of summaries: percent with one decimal everywhere; Pass@1 marked not valid without coverage."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from harness.errors import RunDirError
from harness.rundir import RunDir


def format_pct(fraction: float | None, digits: int = 1) -> str:
    """0.1875 -> '18.8%'; None -> '-'."""
    return "-" if fraction is None else f"{100 * fraction:.{digits}f}%"


def format_pass1(summary: dict[str, Any]) -> str:
    p, se = summary.get("pass@1"), summary.get("pass@1_stderr")
    if p is None:
        return "-"
    text = format_pct(p) + (f" ± {format_pct(se)}" if se is not None else "")
    return text if summary.get("coverage_complete") else f"{text} NOT VALID"


def format_hle(summary: dict[str, Any]) -> str:
    """HLE's official numbers (already in percent): accuracy with its 95% Wald half-width, calibration error."""
    if summary.get("accuracy") is None:
        return ""
    text = f"accuracy {summary['accuracy']:.1f}% ± {summary.get('accuracy_ci95_half_width') or 0:.1f}%"
    cal = summary.get("calibration_error")
    return text + (f", calibration error {cal:.1f}%" if cal is not None else ", calibration error n/a (< 100 samples)")


def format_summary_line(run_dir: str | Path, summary: dict[str, Any]) -> str:
    c = summary["counts"]
    hle = format_hle(summary)
    # summaries written before 'ambiguous' and the hybrid judge existed lack those counts
    deciders = (f"; decided by rules {c['decided_by_rules']}, llm {c['decided_by_llm']}"
                if "decided_by_rules" in c else "")
    return (f"{run_dir} [{summary['judge']['id']}] pass@1 {format_pass1(summary)}  " + (f"{hle}  " if hle else "") +
            f"({c['graded']} graded, {c['no_answer']} no answer, {c.get('ambiguous', 0)} ambiguous, "
            f"{c['truncated']} truncated, {c['generation_error']} generation errors, {c['judge_error']} judge errors, "
            f"{c['missing']} missing of {c['expected']}{deciders})")


def summary_records(run_dirs: list[str], by: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """One record of numbers per (run, judge) or per (run, judge, category); and a warning per skipped argument."""
    rows, skipped = [], []
    for d in run_dirs:
        run = RunDir.open(d)
        try:
            spec = run.read_spec()
        except RunDirError as exc:
            skipped.append(str(exc))
            continue
        base = {"run": d, "task": spec.task, "model": spec.model, "engine": spec.engine_name,
                "samples_per_item": spec.samples}
        judges = run.list_judges()
        if not judges:
            rows.append({**base, "judge": None, "pass@1": None, "pass@1_stderr": None, "coverage_complete": False,
                         "completed": 0, "expected": len(spec.expected_keys())})
        for j in judges:
            s = run.read_summary(j)
            c = s["counts"]
            row = {**base, "task": s["task"], "judge": s["judge"]["id"], "pass@1": s.get("pass@1"),
                   "pass@1_stderr": s.get("pass@1_stderr"), "coverage_complete": bool(s.get("coverage_complete")),
                   "completed": c["expected"] - c["missing"] - c["generation_error"] - c["judge_error"],
                   "expected": c["expected"]}
            for key in ("accuracy", "accuracy_ci95_half_width", "calibration_error"):
                if s.get(key) is not None:
                    row[key] = s[key]
            if by == "category":
                for cat, v in (s.get("per_category") or {}).items():
                    rows.append({**row, "category": cat, "items": v["items"], "pass@1": v["pass@1"],
                                 "pass@1_stderr": v.get("pass@1_stderr")})
            else:
                rows.append(row)
    return rows, skipped


def warn_skipped(message: str) -> None:
    print(f"warning: skipped {message}", file=sys.stderr)


def summary_rows(run_dirs: list[str], by: str | None = None,
                 warn: Callable[[str], None] = warn_skipped) -> list[dict[str, Any]]:
    """Rows of display strings for the summary table; a non-run argument is skipped with a warning."""
    records, skipped = summary_records(run_dirs, by)
    for message in skipped:
        warn(message)
    rows = []
    for r in records:
        shown = {k: r[k] for k in ("run", "task", "model", "engine", "category", "items") if k in r}
        shown["model"] = shown.get("model") or "-"
        shown["samples"] = r["samples_per_item"]
        shown["judge"] = r["judge"] or "(not graded)"
        shown["pass@1"] = format_pass1(r) if r["judge"] else "-"
        shown["coverage"] = f"{r['completed']}/{r['expected']}" + ("" if r["coverage_complete"] else " incomplete")
        shown["hle"] = format_hle(r) if "category" not in r else ""
        rows.append(shown)
    return rows


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) if rows else len(c) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns), "  ".join("-" * widths[c] for c in columns)]
    lines += ["  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)
