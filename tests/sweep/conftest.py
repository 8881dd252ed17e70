"""Helpers for sweep tests: tiny configs written to tmp_path, the CLI run in-process."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from harness.cli import main
from sweep.plot import DPI, FIGSIZE_IN

TINY_VISION = """
[vision]
image_size = 32
patch_size = 8
hidden_size = 32
num_layers = 2
num_heads = 2
intermediate_size = 64
"""


def write_config(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture
def tiny_encoder(tmp_path: Path):
    def make(points: str = "[1, 2, 4]", extra: str = "") -> Path:
        body = f'kind = "encoder"\nthreads = 1\nwarmup_steps = 1\nmeasured_steps = 2\npoints = {points}\n{extra}\n{TINY_VISION}'
        return write_config(tmp_path, "tiny-enc", body)
    return make


def run_cli(*argv: str) -> int:
    return main(["sweep", *argv])


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_chart(path: Path) -> None:
    """The PNG decodes and has the chart's fixed pixel size."""
    with Image.open(path) as img:
        img.load()
        assert img.format == "PNG"
        assert img.size == (int(FIGSIZE_IN[0] * DPI), int(FIGSIZE_IN[1] * DPI))
