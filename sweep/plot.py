"""Pareto charts (matplotlib, Agg): frontier highlighted, points labelled, formulas in a footnote."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sweep.records import SweepRecord, load_records  # noqa: E402
from sweep.sla import read as read_sla  # noqa: E402

FIGSIZE_IN = (10.0, 6.5)
DPI = 100  # 1000 x 650 pixels; no bbox_inches="tight", so the size is fixed


@dataclass(frozen=True)
class Axes:
    x: str
    x_label: str
    x_higher_better: bool
    y: str
    y_label: str
    label_key: str  # the point parameter printed beside each marker
    label_prefix: str


AXES = {
    "prefill": Axes("latency_ms", "Latency per prefill step (ms)", False,
                    "input_tput_per_gpu", "Non-cached input tokens/s/GPU", "batch_tokens", "bt="),
    "decode": Axes("intvty", "Tokens/s/user (intvty)", True,
                   "output_tput_per_gpu", "Output tokens/s/GPU", "requests", "R="),
    "encoder": Axes("latency_ms", "Latency per batch (ms)", False,
                    "images_per_s_per_gpu", "Images/s/GPU", "images", "B="),
    "serve": Axes("intvty", "Tokens/s/user (intvty = 1000 / median TPOT ms)", True,
                  "output_tput_per_gpu", "Output tokens/s/GPU", "concurrency", "c="),
}


def pareto_front(points: Sequence[tuple[float, float]], x_higher_better: bool) -> list[int]:
    """Indices of points not dominated by another (y always higher-better), ordered along x."""
    sign = 1.0 if x_higher_better else -1.0
    front = []
    for i, (xi, yi) in enumerate(points):
        dominated = any(
            sign * xj >= sign * xi and yj >= yi and (sign * xj > sign * xi or yj > yi)
            for j, (xj, yj) in enumerate(points) if j != i)
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def _label(rec: SweepRecord, axes: Axes) -> str:
    text = f"{axes.label_prefix}{rec.point.get(axes.label_key, '?')}"
    if rec.kind == "serve" and rec.point.get("rate"):
        text += f"@{rec.point['rate']}/s"
    return text


def _footnote(records: list[SweepRecord]) -> str:
    defs: dict[str, str] = {}
    for rec in records:
        defs.update(rec.definitions)
    denominators = {str(r.denominators.get("gpus_note", "")) for r in records} - {""}
    lines = [f"{k}: {v}" for k, v in defs.items() if k in _FOOTNOTE_KEYS]
    lines += sorted(denominators)
    return "\n".join(textwrap.shorten(s, 190) for s in lines)


_FOOTNOTE_KEYS = ("latency_ms", "input_tokens_per_s_per_gpu", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
                  "images_per_s_per_gpu", "tpot", "intvty", "output_tput_per_gpu", "acceptance", "tpot_ms")


def plot_series(series: list[tuple[str, list[SweepRecord]]], out_png: Path, title: str | None = None,
                sla: dict | None = None) -> Path:
    """Draw one or more result sets on one Pareto chart (the SLA search's answer starred) and save it as a PNG."""
    kinds = {r.kind for _, recs in series for r in recs}
    if len(kinds) != 1:
        raise ValueError(f"cannot plot different sweep kinds on one chart: {sorted(kinds)}")
    kind = kinds.pop()
    axes = AXES[kind]
    fig, ax = plt.subplots(figsize=FIGSIZE_IN, dpi=DPI)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    all_ok: list[SweepRecord] = []
    for n, (label, recs) in enumerate(series):
        color = colors[n % len(colors)]
        ok = [r for r in recs if r.status == "ok" and r.metrics.get(axes.x) and r.metrics.get(axes.y)]
        headline = [r for r in ok if not r.profiled]
        all_ok += ok
        xy = [(float(r.metrics[axes.x]), float(r.metrics[axes.y])) for r in headline]
        ax.scatter([p[0] for p in xy], [p[1] for p in xy], color=color, alpha=0.45, s=30)
        front = pareto_front(xy, axes.x_higher_better)
        ax.plot([xy[i][0] for i in front], [xy[i][1] for i in front], "-o", color=color, lw=2, ms=7,
                label=f"{label} (frontier)")
        for r, (x, y) in zip(headline, xy):
            ax.annotate(_label(r, axes), (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8, color=color)
        prof = [r for r in ok if r.profiled]
        if prof:
            ax.scatter([r.metrics[axes.x] for r in prof], [r.metrics[axes.y] for r in prof], marker="x",
                       color="grey", label=f"{label} profiled (not a headline)")
        failed = [r for r in recs if r.status != "ok"]
        if failed:
            names = ", ".join(f"{_label(r, axes)} {r.status}" for r in failed)
            ax.plot([], [], " ", label=textwrap.shorten(f"{label} failed: {names}", 80))
    if kind == "decode":
        _annotate_acceptance(ax, all_ok)
    if sla and sla.get("best_point"):
        _mark_sla(ax, axes, all_ok, sla)
    ax.set_xlabel(axes.x_label)
    ax.set_ylabel(axes.y_label)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    ax.set_title(title or _default_title(kind, series), fontsize=10)
    note = _footnote(all_ok)
    n_lines = note.count("\n") + 1 if note else 0
    fig.subplots_adjust(bottom=0.1 + 0.018 * n_lines, top=0.92)
    if note:
        fig.text(0.01, 0.01, note, fontsize=6.5, va="bottom", ha="left", family="monospace")
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=DPI)
    plt.close(fig)
    return out_png


def _annotate_acceptance(ax, records: list[SweepRecord]) -> None:
    spec = [r for r in records if r.point.get("nextn")]
    if not spec:
        return
    r = spec[0]
    target = r.metrics.get("acceptance_length_target")
    realised = [x.metrics.get("acceptance_length") for x in spec if x.metrics.get("acceptance_length")]
    text = f"nextn={r.point['nextn']}, p={r.point.get('accept')}: target AL={target:.3f}" if target else ""
    if realised:
        text += f", realised AL={min(realised):.3f}..{max(realised):.3f}"
    ax.text(0.01, 0.99, text, transform=ax.transAxes, va="top", fontsize=8)


def _mark_sla(ax, axes: Axes, records: list[SweepRecord], sla: dict) -> None:
    best = [r for r in records if r.point == sla["best_point"] and not r.profiled]
    if not best:
        return
    x, y = best[-1].metrics[axes.x], best[-1].metrics[axes.y]
    limits = ", ".join(f"{k} <= {v:g}" for k, v in sorted(sla["sla"].items()))
    goodput = sla.get("best_metrics", {}).get("request_goodput")
    ax.scatter([x], [y], marker="*", s=320, facecolor="none", edgecolor="black", linewidth=1.5, zorder=5,
               label=textwrap.shorten(f"SLA max {sla['over']} ({limits}); goodput "
                                      f"{goodput if goodput is None else round(goodput, 3)}/s", 90))


def _default_title(kind: str, series: list[tuple[str, list[SweepRecord]]]) -> str:
    recs = [r for _, rs in series for r in rs]
    prov = recs[0].provenance if recs else {}
    tags = ", ".join(dict.fromkeys(label for label, _ in series))
    if kind == "serve":  # the client's host says nothing about the server's hardware
        return f"serve sweep: {tags} - {prov.get('served_model') or ''} at {prov.get('base_url', '')}"
    model = prov.get("model") or prov.get("encoder") or ""
    where = f"{prov.get('device_name', '')} ({prov.get('dtype', '')})"
    return f"{kind} sweep: {tags} - {model} on {where}"


def plot_results(results: Path, extra: Sequence[str | Path] = (), out_png: Path | None = None) -> Path:
    """Chart results.jsonl (with --compare files overlaid) to pareto.png beside it, or out_png."""
    series = load_records([results, *extra])
    target = out_png or (results.parent / ("pareto.png" if not extra else "compare.png"))
    return plot_series(series, target, sla=read_sla(results.parent) if not extra else None)
