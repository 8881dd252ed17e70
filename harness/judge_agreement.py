"""One run graded by several judges: agreement and Cohen's kappa per pair, every disagreement (`compare RUN`)."""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from harness.errors import RunDirError
from harness.rundir import RunDir
from harness.stats import cohen_kappa
from records import GradeRecord

# a judge read the response and decided
VERDICT_STATUSES = ("graded", "no_answer", "ambiguous", "truncated")


def _decided(g: GradeRecord) -> bool:
    return g.status in VERDICT_STATUSES and g.correct is not None


def compare_pair(a_id: str, a: list[GradeRecord], b_id: str, b: list[GradeRecord]) -> dict[str, Any]:
    """Agreement on samples both judges decided, and each disagreement with both readings."""
    a_by, b_by = {g.key: g for g in a}, {g.key: g for g in b}
    both = sorted(k for k in a_by.keys() & b_by.keys() if _decided(a_by[k]) and _decided(b_by[k]))
    disagreements = []
    for key in both:
        ga, gb = a_by[key], b_by[key]
        if ga.correct != gb.correct:
            disagreements.append({
                "item_id": key[0], "sample": key[1], "target": ga.target if ga.target is not None else gb.target,
                a_id: {"correct": ga.correct, "status": ga.status, "extracted": ga.extracted},
                b_id: {"correct": gb.correct, "status": gb.status, "extracted": gb.extracted},
            })
    agree = len(both) - len(disagreements)
    shared = set(both)
    return {
        "judges": [a_id, b_id],
        "both_decided": len(both),
        "agree": agree,
        "agreement": agree / len(both) if both else None,
        "kappa": cohen_kappa([bool(a_by[k].correct) for k in both], [bool(b_by[k].correct) for k in both]),
        "only_decided_by": {a_id: sum(1 for k, g in a_by.items() if _decided(g) and k not in shared),
                            b_id: sum(1 for k, g in b_by.items() if _decided(g) and k not in shared)},
        "correct_rate_on_shared": {a_id: sum(a_by[k].correct for k in both) / len(both) if both else None,
                                   b_id: sum(b_by[k].correct for k in both) / len(both) if both else None},
        "disagreements": disagreements,
    }


def compare_run(run_dir: str | Path, judges: list[str] | None = None) -> dict[str, Any]:
    run = RunDir.open(run_dir)
    if not run.path.is_dir():
        raise RunDirError(f"{run.path}: no such run directory")
    # a full id (rules-v11) or a short name (rules); one not here names the judges that are
    chosen = [run.resolve_judge(j) for j in judges] if judges else run.list_judges()
    if len(chosen) < 2:
        raise RunDirError(f"{run.path}: compare needs two judges, found {', '.join(chosen) or 'none'}; "
                          "grade again with another --judge first")
    grades = {j: run.read_grades(j) for j in chosen}
    pairs = [compare_pair(a, grades[a], b, grades[b]) for a, b in itertools.combinations(chosen, 2)]
    return {"run": str(run_dir), "judges": chosen, "pairs": pairs}


def _clip(text: Any, width: int) -> str:
    s = "-" if text is None else " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _says(reading: dict[str, Any]) -> str:
    if reading["correct"]:
        return "right"
    return {"no_answer": "no-ans", "ambiguous": "ambig", "truncated": "trunc"}.get(reading["status"], "wrong")


def format_report(report: dict[str, Any], show: int) -> str:
    lines = [f"run {report['run']}: {len(report['judges'])} judges"]
    for pair in report["pairs"]:
        a, b = pair["judges"]
        rate = "-" if pair["agreement"] is None else f"{100 * pair['agreement']:.1f}%"
        kappa = "n/a" if pair["kappa"] is None else f"{pair['kappa']:.2f}"
        lines += ["", f"{a}  vs  {b}",
                  f"  agreement {rate} ({pair['agree']} of {pair['both_decided']} samples both decided; "
                  f"{len(pair['disagreements'])} disagree; decided by one only: "
                  f"{pair['only_decided_by'][a]} / {pair['only_decided_by'][b]}); Cohen's kappa {kappa}"]
        if not pair["disagreements"]:
            continue
        header = f"  {'item':<24} {'s':>3}  {'target':<16} {'A says':<6} {'A extracted':<24} {'B says':<6} B extracted"
        lines += [f"  A = {a}, B = {b}", header, "  " + "-" * (len(header) - 2)]
        for d in pair["disagreements"][:show]:
            da, db = d[a], d[b]
            lines.append(f"  {_clip(d['item_id'], 24):<24} {d['sample']:>3}  {_clip(d['target'], 16):<16} "
                         f"{_says(da):<6} {_clip(da['extracted'], 24):<24} {_says(db):<6} {_clip(db['extracted'], 40)}")
        hidden = len(pair["disagreements"]) - show
        if hidden > 0:
            lines.append(f"  ... {hidden} more (--show N, or --json for all)")
    return "\n".join(lines)
