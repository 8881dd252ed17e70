"""The report draws each sweep point's Pass@1 beside its tokens/s (real files, real report build, Chromium)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.report.build import build_report
from sweep.records import ResultsFile, SweepRecord


def write_sweep(root: Path, tag: str, pass1: float, stderr: float, valid: bool, speed: float) -> None:
    results = ResultsFile(root / tag / "results.jsonl")
    for r in (1, 4):
        accuracy = {"task": "gpqa", "pass@1": pass1, "pass@1_stderr": stderr, "coverage_complete": valid}
        results.append(SweepRecord(tag=tag, kind="decode", point={"requests": r, "context": 64, "nextn": 0,
                                                                   "accept": None}, status="ok",
                                   metrics={"intvty": speed / r, "output_tput_per_gpu": speed * r ** 0.5},
                                   accuracy=accuracy))


@pytest.fixture
def report(tmp_path: Path) -> Path:
    write_sweep(tmp_path / "sweeps", "bf16", 0.25, 0.05, True, 80.0)
    write_sweep(tmp_path / "sweeps", "int4", 0.40, 0.10, False, 120.0)
    build_report([str(tmp_path / "sweeps")], tmp_path / "report")
    return tmp_path / "report" / "index.html"


def test_accuracy_is_drawn_beside_speed_for_every_graded_point(report: Path):
    html = report.read_text()
    figures = re.findall(r'<figure class="accuracy">(.*?)</figure>', html, re.S)
    assert len(figures) == 3  # one per sweep and one overlay of both
    overlay = figures[0]
    assert overlay.count('class="acc"') == 2 and overlay.count('class="acc invalid"') == 2
    assert "Pass@1 40.0% +/- 19.6 - NOT VALID: coverage incomplete" in overlay  # 1.96 x 0.10
    assert "Pass@1 25.0% +/- 9.8</title>" in overlay
    # both bf16 points carry one configuration's Pass@1, so they sit at one height, below the int4 points
    bf16 = {float(y) for y in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="4" stroke="#1f77b4"', overlay)}
    int4 = {float(y) for y in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="4" stroke="#d62728"', overlay)}
    assert len(bf16) == len(int4) == 1 and bf16.pop() > int4.pop()  # SVG y grows downwards


def test_the_accuracy_chart_renders_in_chromium(report: Path):
    from tests.report.browser import start_chromium
    browser, _ = start_chromium()
    try:
        browser.get(report.as_uri())
        sizes = browser.execute_script(
            "return Array.from(document.querySelectorAll('figure.accuracy svg')).map(s => s.getBoundingClientRect().width)")
        hollow = browser.execute_script("return document.querySelectorAll('figure.accuracy circle.invalid').length")
    finally:
        browser.quit()
    assert len(sizes) == 3 and min(sizes) > 200
    assert hollow == 2 + 2
