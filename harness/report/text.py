"""Plain-text tables of summaries: percent with one decimal everywhere; Pass@1 marked not valid without coverage."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from harness.errors import RunDirError
from harness.grade_summary import GradeSummary
from harness.rundir import RunDir, RunSpec


def format_pct(fraction: float | None, digits: int = 1) -> str:
    """0.1875 -> '18.8%'; None -> '-'."""
    return "-" if fraction is None else f"{100 * fraction:.{digits}f}%"


# The one interval every consumer prints beside Pass@1 (CLI table, grade line, report): a 95% normal interval.
PASS1_INTERVAL = "95% CI"


def ci95_half_width(stderr: float | None) -> float | None:
    """Half-width of the 95% normal interval from the item-clustered standard error."""
    return None if stderr is None else 1.96 * stderr


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 run', '2 runs'; `many` where adding an s is wrong ('samples per item')."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def format_pass1(p: float | None, stderr: float | None, coverage_complete: bool) -> str:
    """'18.8% ± 4.1%': Pass@1 ± the half-width of its 95% CI, marked NOT VALID without full coverage."""
    half = ci95_half_width(stderr)
    if p is None:
        return "-"
    text = format_pct(p) + (f" ± {format_pct(half)}" if half is not None else "")
    return text if coverage_complete else f"{text} NOT VALID"


def format_hle(accuracy: float | None, half_width: float | None, calibration_error: float | None) -> str:
    """HLE's official numbers (already in percent): accuracy with its 95% Wald half-width, calibration error."""
    if accuracy is None:
        return ""
    text = f"accuracy {accuracy:.1f}% ± {half_width or 0:.1f}%"
    cal = calibration_error
    return text + (f", calibration error {cal:.1f}%" if cal is not None else ", calibration error n/a (< 100 samples)")


def format_summary_line(run_dir: str | Path, summary: GradeSummary) -> str:
    c = summary.counts
    scores = summary.hle
    hle = format_hle(scores.accuracy, scores.accuracy_ci95_half_width, scores.calibration_error) if scores else ""
    # summaries written before 'ambiguous' and the hybrid judge existed lack those counts
    deciders = (f"; decided by rules {c['decided_by_rules']}, llm {c['decided_by_llm']}"
                if "decided_by_rules" in c else "")
    pass1 = format_pass1(summary.pass1, summary.pass1_stderr, summary.coverage_complete)
    return (f"{run_dir} [{summary.judge_id}] pass@1 {pass1} ({PASS1_INTERVAL})  " + (f"{hle}  " if hle else "") +
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
            c = s.counts
            row = {**base, "task": s.task, "judge": s.judge_id, "pass@1": s.pass1,
                   "pass@1_stderr": s.pass1_stderr, "coverage_complete": s.coverage_complete,
                   "completed": c["expected"] - c["missing"] - c["generation_error"] - c["judge_error"],
                   "expected": c["expected"]}
            if s.hle:
                row |= {k: v for k, v in (("accuracy", s.hle.accuracy),
                                          ("accuracy_ci95_half_width", s.hle.accuracy_ci95_half_width),
                                          ("calibration_error", s.hle.calibration_error)) if v is not None}
            if by == "category":
                coverage = category_coverage(run, j, spec)
                for cat, v in s.category_scores().items():
                    completed, expected = coverage.get(cat, (0, 0))
                    rows.append({**row, "category": cat, "items": v.items, "pass@1": v.pass1,
                                 "pass@1_stderr": v.pass1_stderr, "completed": completed,
                                 "expected": expected, "coverage_complete": completed == expected})
            else:
                rows.append(row)
    return rows, skipped


def category_coverage(run: RunDir, judge: str, spec: RunSpec) -> dict[str, tuple[int, int]]:
    """Per category: (samples with a finished generation and a grade, samples expected), as the run's coverage."""
    grades = {g.key: g for g in run.read_grades(judge)}
    category = {g.item_id: g.category for g in grades.values()}
    out: dict[str, list[int]] = {}
    for item_id, sample in spec.expected_keys():
        counts = out.setdefault(category.get(item_id) or "uncategorised", [0, 0])
        g = grades.get((item_id, sample))
        counts[0] += g is not None and g.status not in ("generation_error", "judge_error")
        counts[1] += 1
    return {cat: (done, expected) for cat, (done, expected) in out.items()}


def warn_skipped(message: str) -> None:
    print(f"warning: skipped {message}", file=sys.stderr)


def summary_rows(run_dirs: list[str], by: str | None = None,
                 warn: Callable[[str], None] = warn_skipped) -> list[dict[str, Any]]:
    """Rows of display strings for the summary table; a non-run argument is skipped with a warning."""
    records, skipped = summary_records(run_dirs, by)
    for message in skipped:
        warn(message)
    return display_rows(records)


def display_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """summary_records' numbers as the table's strings (percent, coverage, NOT VALID marks)."""
    rows = []
    for r in records:
        shown = {k: r[k] for k in ("run", "task", "model", "engine", "category", "items") if k in r}
        shown["model"] = shown.get("model") or "-"
        shown["samples"] = r["samples_per_item"]
        shown["judge"] = r["judge"] or "(not graded)"
        shown["pass@1"] = format_pass1(r["pass@1"], r["pass@1_stderr"], r["coverage_complete"]) if r["judge"] else "-"
        shown["coverage"] = f"{r['completed']}/{r['expected']}" + ("" if r["coverage_complete"] else " incomplete")
        shown["hle"] = format_hle(r.get("accuracy"), r.get("accuracy_ci95_half_width"),
                                  r.get("calibration_error")) if "category" not in r else ""
        rows.append(shown)
    return rows


def format_table(rows: list[dict[str, Any]], columns: list[str], headers: dict[str, str] | None = None) -> str:
    """Columns padded to their widest cell; `headers` renames a column's heading."""
    head = {c: (headers or {}).get(c, c) for c in columns}
    widths = {c: max(len(head[c]), *(len(str(r.get(c, ""))) for r in rows)) if rows else len(head[c]) for c in columns}
    lines = ["  ".join(head[c].ljust(widths[c]) for c in columns), "  ".join("-" * widths[c] for c in columns)]
    lines += ["  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)
