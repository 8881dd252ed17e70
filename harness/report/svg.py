"""Small inline SVG charts drawn by hand (no JS, no CDN): reliability diagram and Pareto scatter."""
from __future__ import annotations

import math
from html import escape
from typing import Sequence

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
W, H, PAD_L, PAD_B, PAD_T, PAD_R = 520, 340, 62, 46, 14, 16


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    for mult in (1, 2, 5, 10):
        if (hi - lo) / (step * mult) <= n:
            step *= mult
            break
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step + 1e-9) + 1)]


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


class _Frame:
    """A plot area mapping data coordinates to pixels, with axes, ticks and labels."""

    def __init__(self, x_range: tuple[float, float], y_range: tuple[float, float], x_label: str, y_label: str):
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        self.parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
                      'class="chart" role="img">']
        for t in _ticks(self.x0, self.x1):
            x = self.px(t)
            self.parts.append(f'<line x1="{x:.1f}" y1="{PAD_T}" x2="{x:.1f}" y2="{H - PAD_B}" class="grid"/>'
                              f'<text x="{x:.1f}" y="{H - PAD_B + 16}" text-anchor="middle">{_fmt(t)}</text>')
        for t in _ticks(self.y0, self.y1):
            y = self.py(t)
            self.parts.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" class="grid"/>'
                              f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
        self.parts.append(f'<rect x="{PAD_L}" y="{PAD_T}" width="{W - PAD_L - PAD_R}" height="{H - PAD_T - PAD_B}" class="frame"/>'
                          f'<text x="{(PAD_L + W - PAD_R) / 2}" y="{H - 8}" text-anchor="middle">{escape(x_label)}</text>'
                          f'<text transform="translate(14 {(PAD_T + H - PAD_B) / 2}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>')

    def px(self, x: float) -> float:
        return PAD_L + (x - self.x0) / ((self.x1 - self.x0) or 1) * (W - PAD_L - PAD_R)

    def py(self, y: float) -> float:
        return H - PAD_B - (y - self.y0) / ((self.y1 - self.y0) or 1) * (H - PAD_T - PAD_B)

    def legend(self, n: int, label: str, color: str) -> None:
        """The n-th series' name in the top right corner, in its colour."""
        self.parts.append(f'<text x="{W - PAD_R - 6}" y="{PAD_T + 16 + 14 * n}" text-anchor="end" fill="{color}">'
                          f'{escape(label)}</text>')

    def close(self) -> str:
        return "".join(self.parts) + "</svg>"


def reliability_diagram(bins: Sequence[dict], label: str = "") -> str:
    """Bars of accuracy per confidence bin against the diagonal of perfect calibration (both in percent)."""
    f = _Frame((0, 100), (0, 100), "stated confidence (%)", "accuracy (%)")
    f.parts.append(f'<line x1="{f.px(0)}" y1="{f.py(0)}" x2="{f.px(100)}" y2="{f.py(100)}" class="diag"/>')
    for b in bins:
        if not b["n"]:
            continue
        x, w = f.px(b["lo"]), f.px(b["hi"]) - f.px(b["lo"])
        y = f.py(b["accuracy"])
        f.parts.append(f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{w - 2:.1f}" height="{f.py(0) - y:.1f}" class="bar">'
                       f'<title>{b["lo"]}-{b["hi"]}%: {b["n"]} samples, accuracy {b["accuracy"]:.1f}%, '
                       f'mean confidence {b["confidence"]:.1f}%</title></rect>'
                       f'<circle cx="{f.px(b["confidence"]):.1f}" cy="{f.py(b["confidence"]):.1f}" r="3" class="conf"/>')
    if label:
        f.parts.append(f'<text x="{PAD_L + 8}" y="{PAD_T + 16}">{escape(label)}</text>')
    return f.close()


def pareto_chart(series: Sequence[dict], x_label: str, y_label: str) -> str:
    """Scatter per series (dicts with label, points [(x, y, name)], front [indices]); frontier joined by a line."""
    xs = [p[0] for s in series for p in s["points"]]
    ys = [p[1] for s in series for p in s["points"]]
    if not xs:
        return '<p class="muted">no successful points to draw</p>'
    f = _Frame((0, max(xs) * 1.08), (0, max(ys) * 1.1), x_label, y_label)
    for n, s in enumerate(series):
        color = COLORS[n % len(COLORS)]
        front = [s["points"][i] for i in s["front"]]
        if len(front) > 1:
            path = " ".join(f"{f.px(x):.1f},{f.py(y):.1f}" for x, y, _ in front)
            f.parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for i, (x, y, name) in enumerate(s["points"]):
            on_front = i in s["front"]
            f.parts.append(f'<circle cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="{4 if on_front else 3}" fill="{color}" '
                           f'fill-opacity="{1 if on_front else 0.45}"><title>{escape(s["label"])} {escape(name)}: '
                           f'{_fmt(x)}, {_fmt(y)}</title></circle>'
                           f'<text x="{f.px(x) + 5:.1f}" y="{f.py(y) - 5:.1f}" class="pt" fill="{color}">{escape(name)}</text>')
        f.legend(n, s["label"], color)
    return f.close()


def accuracy_speed_chart(series: Sequence[dict], x_label: str) -> str:
    """Pass@1 (with a 95% interval) against speed per point: is the faster configuration still right?

    series: dicts with label and points [(speed, pass1, stderr, valid, name)]; an invalid Pass@1
    (coverage incomplete) is drawn hollow and says so in its tooltip."""
    xs = [p[0] for s in series for p in s["points"]]
    if not xs:
        return '<p class="muted">no graded points to draw</p>'
    f = _Frame((0, max(xs) * 1.08), (0, 100), x_label, "Pass@1 (%), 95% interval")
    for n, s in enumerate(series):
        color = COLORS[n % len(COLORS)]
        for x, p, se, valid, name in s["points"]:
            lo, hi = max(0.0, p - 1.96 * (se or 0)) * 100, min(1.0, p + 1.96 * (se or 0)) * 100
            note = "" if valid else " - NOT VALID: coverage incomplete"
            f.parts.append(f'<line x1="{f.px(x):.1f}" y1="{f.py(lo):.1f}" x2="{f.px(x):.1f}" y2="{f.py(hi):.1f}" '
                           f'stroke="{color}" stroke-width="1.5"/>'
                           f'<circle cx="{f.px(x):.1f}" cy="{f.py(p * 100):.1f}" r="4" stroke="{color}" '
                           f'fill="{color if valid else "white"}" class="acc{"" if valid else " invalid"}">'
                           f'<title>{escape(s["label"])} {escape(name)}: {_fmt(x)}, Pass@1 {p * 100:.1f}% '
                           f'+/- {1.96 * (se or 0) * 100:.1f}{note}</title></circle>'
                           f'<text x="{f.px(x) + 5:.1f}" y="{f.py(p * 100) - 5:.1f}" class="pt" fill="{color}">'
                           f'{escape(name)}</text>')
        f.legend(n, s["label"], color)
    return f.close()
