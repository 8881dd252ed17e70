"""Plain-text tables of summaries; Pass@1 is marked not valid wherever coverage is incomplete."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.rundir import RunDir


def format_pass1(summary: dict[str, Any]) -> str:
    p, se = summary.get("pass@1"), summary.get("pass@1_stderr")
    if p is None:
        return "-"
    text = f"{100 * p:.1f}" + (f" ± {100 * se:.1f}" if se is not None else "")
    return text if summary.get("coverage_complete") else f"{text} NOT VALID"


def format_hle(summary: dict[str, Any]) -> str:
    """HLE's official numbers: accuracy with its 95% Wald half-width, and calibration error."""
    if summary.get("accuracy") is None:
        return ""
    text = f"accuracy {summary['accuracy']:.1f} ± {summary.get('accuracy_ci95_half_width', 0):.1f}"
    cal = summary.get("calibration_error")
    return text + (f", calibration error {cal:.1f}" if cal is not None else ", calibration error n/a (< 100 samples)")


def format_summary_line(run_dir: str | Path, summary: dict[str, Any]) -> str:
    c = summary["counts"]
    hle = format_hle(summary)
    # summaries written before 'ambiguous' existed lack the count
    deciders = (f"; decided by rules {c['decided_by_rules']}, llm {c['decided_by_llm']}"
                if "decided_by_rules" in c else "")
    return (f"{run_dir} [{summary['judge']['id']}] pass@1 {format_pass1(summary)}  " + (f"{hle}  " if hle else "") +
            f"({c['graded']} graded, {c['no_answer']} no answer, {c.get('ambiguous', 0)} ambiguous, "
            f"{c['truncated']} truncated, {c['generation_error']} generation errors, {c['judge_error']} judge errors, "
            f"{c['missing']} missing of {c['expected']}{deciders})")


def summary_rows(run_dirs: list[str]) -> list[dict[str, Any]]:
    rows = []
    for d in run_dirs:
        run = RunDir(d)
        spec = run.read_spec()
        judges = run.list_judges()
        if not judges:
            rows.append({"run": d, "task": spec.task, "judge": "(not graded)", "pass@1": "-", "coverage": "-", "n": len(spec.expected_keys())})
        for j in judges:
            s = run.read_summary(j)
            c = s["counts"]
            done = c["expected"] - c["missing"] - c["generation_error"] - c["judge_error"]
            row = {"run": d, "task": s["task"], "judge": s["judge"]["id"], "pass@1": format_pass1(s),
                   "coverage": f"{done}/{c['expected']}" + ("" if s["coverage_complete"] else " incomplete"),
                   "n": c["expected"], "hle": format_hle(s)}
            rows.append(row)
    return rows


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) if rows else len(c) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns), "  ".join("-" * widths[c] for c in columns)]
    lines += ["  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)
