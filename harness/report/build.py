"""Write the static HTML report: index.html rendered by jinja2, report.js/css, and paged sample data."""
from __future__ import annotations

import json
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import jinja2

from harness.errors import RunDirError
from harness.report.collect import RunData, SweepData, load_all
from harness.jsonl import remove_orphan_temps
from harness.report.output_dir import MANIFEST, files_written_before, remove_previous, write_manifest
from harness.report.samples import js_json, write_samples
from harness.report.svg import pareto_chart, reliability_diagram
from harness.report.text import ci95_half_width, format_pct

HERE = Path(__file__).parent
PAIRED_MAX_ROWS = 30  # baseline-vs-other comparisons shown per report
HEATMAP_MAX_ITEMS = 400  # beyond this the table gets slow to scan; the widest disagreements are shown first
COUNT_ORDER = ("graded", "no_answer", "truncated", "generation_error", "judge_error", "missing")
NOT_STATUS_COUNTS = ("expected", "generated")
JUDGED = ("graded", "no_answer", "truncated", "ambiguous")  # statuses where the judge read the response


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = format_pct
    env.filters["js_json"] = js_json
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return env


def _overview_rows(runs: list[RunData]) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        spec = run.spec
        base = {"rid": run.rid, "run": run.path, "task": spec.task, "model": spec.model or "-",
                "engine": spec.engine_name, "samples": spec.samples, "sha": spec.dataset_sha256,
                "date": spec.created_at}
        if not run.summaries:
            rows.append({**base, "judge": None, "valid": False})
        for s in run.summaries.values():
            rows.append({**base, "judge": s.judge_id, "pass1": s.pass1,
                         "ci95": ci95_half_width(s.pass1_stderr), "pass_k": s.pass_k or {},
                         "counts": s.counts, "valid": s.coverage_complete,
                         "count_keys": [*COUNT_ORDER, *(k for k in s.counts if k not in COUNT_ORDER + NOT_STATUS_COUNTS)],
                         "date": s.graded_at or spec.created_at})
    return rows


def _task_tables(runs: list[RunData]) -> list[dict[str, Any]]:
    """Per task: columns (run x judge), per-category rows and a per-item heat map."""
    by_task: dict[str, list[RunData]] = defaultdict(list)
    for run in runs:
        by_task[run.spec.task].append(run)
    tables = []
    for task, task_runs in by_task.items():
        columns = [{"label": f"{r.path} · {s.judge_id}", "rid": r.rid, "categories": s.category_scores(),
                    "items": s.item_scores()}
                   for r in task_runs for s in r.summaries.values()]
        if not columns:
            continue
        cats = sorted({c for col in columns for c in col["categories"]})
        cat_rows = [{"name": c, "cells": [col["categories"].get(c) for col in columns]} for c in cats]
        items = list(dict.fromkeys(i for r in task_runs for i in r.spec.item_ids))
        item_rows = []
        for i in items:
            cells = [col["items"].get(i) for col in columns]
            values = [c.pass1 for c in cells if c and c.pass1 is not None]
            item_rows.append({"id": i, "cells": cells, "spread": (max(values) - min(values)) if values else 0.0})
        shown = sorted(item_rows, key=lambda r: -r["spread"])[:HEATMAP_MAX_ITEMS] if len(item_rows) > HEATMAP_MAX_ITEMS \
            else item_rows
        tables.append({"task": task, "columns": [c["label"] for c in columns], "column_rids": [c["rid"] for c in columns],
                       "categories": cat_rows,
                       "items": shown, "items_total": len(item_rows)})
    return tables


def _paired_rows(runs: list[RunData]) -> list[dict[str, Any]]:
    """Per task, the first run as baseline A against each later run B, for every judge both have."""
    from harness.paired import compare_runs

    rows = []
    for task in dict.fromkeys(r.spec.task for r in runs):
        baseline, *others = [r for r in runs if r.spec.task == task]
        for other in others:
            for judge in (j for j in baseline.summaries if j in other.summaries):
                if len(rows) >= PAIRED_MAX_ROWS:
                    return rows
                try:
                    rows.append(compare_runs(baseline.path, other.path, judge))
                except RunDirError as exc:  # e.g. no item in common: the rest of the report still stands
                    print(f"warning: no paired comparison: {exc}", file=sys.stderr)
    return rows


def _reliability_bins(grades) -> list[dict[str, Any]]:
    bins = [{"lo": 10 * i, "hi": 10 * (i + 1), "n": 0, "right": 0, "conf_sum": 0.0} for i in range(10)]
    for g in grades.values():
        conf = g.detail.get("confidence")
        if g.status in JUDGED and isinstance(conf, (int, float)):
            b = bins[min(9, max(0, int(conf // 10)))]
            b["n"] += 1
            b["right"] += g.correct is True
            b["conf_sum"] += conf
    for b in bins:
        b["accuracy"] = 100 * b["right"] / b["n"] if b["n"] else 0.0
        b["confidence"] = b["conf_sum"] / b["n"] if b["n"] else 0.0
    return bins


def _hle_sections(runs: list[RunData]) -> list[dict[str, Any]]:
    out = []
    for run in runs:
        for judge, s in run.summaries.items():
            if s.hle is None:
                continue
            bins = _reliability_bins(run.grades.get(judge, {}))
            out.append({"run": run.path, "judge": s.judge_id, "scores": s.hle, "bins": bins,
                        "svg": reliability_diagram(bins) if any(b["n"] for b in bins) else None})
    return out


def _sweep_series(sweep: SweepData) -> tuple[dict[str, Any] | None, Any]:
    from sweep.plot import AXES, pareto_front  # matplotlib loads only when there is a sweep

    kinds = {r.kind for r in sweep.records}
    if len(kinds) != 1:
        return None, None
    axes = AXES[kinds.pop()]
    ok = [r for r in sweep.records if r.status == "ok" and not r.profiled
          and r.metrics.get(axes.x) and r.metrics.get(axes.y)]
    points = [(float(r.metrics[axes.x]), float(r.metrics[axes.y]), f"{axes.label_prefix}{r.point.get(axes.label_key, '?')}")
              for r in ok]
    return {"label": sweep.label, "points": points, "front": pareto_front([p[:2] for p in points], axes.x_higher_better)}, axes


def _sweep_sections(sweeps: list[SweepData]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    sections, by_kind = [], defaultdict(list)
    for sw in sweeps:
        series, axes = _sweep_series(sw)
        kind = sw.records[0].kind if sw.records else "?"
        rows = [{"point": r.point, "status": r.status, "profiled": r.profiled, "reason": r.reason,
                 "x": r.metrics.get(axes.x) if axes else None, "y": r.metrics.get(axes.y) if axes else None,
                 "cost": (r.cost or {}).get("dollars_per_million")}
                for r in sw.records]
        sections.append({"label": sw.label, "path": sw.path, "kind": kind, "rows": rows,
                         "x_label": axes.x_label if axes else "", "y_label": axes.y_label if axes else "",
                         "svg": pareto_chart([series], axes.x_label, axes.y_label) if series else None,
                         "accuracy_svg": _accuracy_svg([sw], axes),
                         "provenance": sw.records[0].provenance if sw.records else {}})
        if series:
            by_kind[kind].append((series, axes))
    overlays = [{"kind": kind, "labels": [s["label"] for s, _ in group],
                 "svg": pareto_chart([s for s, _ in group], group[0][1].x_label, group[0][1].y_label),
                 "accuracy_svg": _accuracy_svg([sw for sw in sweeps if sw.label in {s["label"] for s, _ in group}],
                                               group[0][1])}
                for kind, group in by_kind.items() if len(group) > 1]
    return sections, overlays


def _accuracy_svg(sweeps: list[SweepData], axes: Any) -> str | None:
    """Pass@1 beside output tokens/s/GPU for sweeps whose points carry an eval ([eval] in the tag)."""
    from harness.report.collect import accuracy_points
    from harness.report.svg import accuracy_speed_chart

    if axes is None:
        return None
    series = [s for s in (accuracy_points(sw, axes.y, axes.label_prefix, axes.label_key) for sw in sweeps) if s]
    return accuracy_speed_chart(series, axes.y_label) if series else None


def build_report(paths: list[str], out: Path, force: bool = False) -> dict[str, Any]:
    """Render every run and sweep under `paths` into out/index.html; returns counts for the CLI line.

    Only files an earlier report wrote (its manifest) are replaced; nothing else in `out` is deleted.
    """
    previous = files_written_before(out, force)  # refuses a folder of other files before any work
    runs, sweeps, skipped = load_all(paths)
    if not runs and not sweeps:
        raise FileNotFoundError("nothing to report: " + "; ".join(skipped))
    out.mkdir(parents=True, exist_ok=True)
    remove_orphan_temps(out, (MANIFEST,))  # a manifest write killed half-way; its pid is checked
    remove_previous(out, previous)  # pages of an earlier build must not linger beside new ones
    data_dir = out / "data"
    data_dir.mkdir(exist_ok=True)
    viewers = [write_samples(run, data_dir) for run in runs]
    sweep_sections, overlays = _sweep_sections(sweeps)
    html = _env().get_template("report.html.jinja").render(
        generated_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), inputs=paths, skipped=skipped,
        overview=_overview_rows(runs), paired=_paired_rows(runs), tasks=_task_tables(runs), hle=_hle_sections(runs),
        sweeps=sweep_sections, overlays=overlays, runs=runs, viewers=viewers,
    )
    (out / "index.html").write_text(html, encoding="utf-8")
    for name in ("report.js", "report.css"):
        shutil.copyfile(HERE / "static" / name, out / name)
    pages = [data_dir / f"{v['rid']}-{page}.js" for v in viewers for page in
             ("index", *(f"p{n:04d}" for n in range(v["pages"])))]
    write_manifest(out, [out / "index.html", out / "report.js", out / "report.css", *pages])
    return {"runs": len(runs), "sweeps": len(sweeps), "samples": sum(v["samples"] for v in viewers), "skipped": skipped}
