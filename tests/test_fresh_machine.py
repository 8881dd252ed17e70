"""A fresh machine: setup.sh's torch index choice (real HTTP on 127.0.0.1), what git ignores, pyproject's license."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "scripts" / "setup.sh"


class _SimpleIndex(BaseHTTPRequestHandler):
    """Answers like a PEP 503 index page for any project."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b"<html><body><a href='torch-2.13.0-py3-none-any.whl'>torch</a></body></html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def dry_run(tmp_path: Path, gpu: bool = False, **env: str) -> tuple[str, float]:
    """setup.sh in dry-run mode; (stdout + stderr, seconds). `nvidia-smi -L` answers as on a machine with or
    without a GPU (the driver's tool is often installed where no GPU is)."""
    tool = tmp_path / "bin" / "nvidia-smi"
    tool.parent.mkdir(exist_ok=True)
    tool.write_text("#!/bin/sh\n" + ("echo 'GPU 0: H100 (UUID: GPU-0)'\n" if gpu else
                                     "echo 'NVIDIA-SMI has failed: no NVIDIA driver' >&2; exit 9\n"))
    tool.chmod(0o755)
    full = {**os.environ, "PATH": f"{tool.parent}{os.pathsep}{os.environ['PATH']}", "PYTHON": sys.executable,
            "HARNESS_SETUP_DRY_RUN": "1", **env}
    t0 = time.monotonic()
    proc = subprocess.run([shutil.which("bash"), str(SETUP)], env=full, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr, time.monotonic() - t0


def torch_command(output: str) -> str:
    [line] = [x for x in output.splitlines() if x.startswith("would run:") and "torch==" in x]
    return line


def test_a_reachable_torch_index_is_added_as_an_extra_index(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SimpleIndex)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/whl/cpu"
        out, _ = dry_run(tmp_path, HARNESS_TORCH_INDEX=url)
    finally:
        server.shutdown()
    assert torch_command(out).endswith(f"torch==2.13.0 --extra-index-url {url}")
    assert "--index-url" not in torch_command(out).replace("--extra-index-url", "")  # never replaces pip's own


def test_a_silent_index_is_left_out_within_seconds(tmp_path):
    """An index that accepts connections but never answers (a firewall, a proxy) must not stall the install."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/whl/cpu"
        out, took = dry_run(tmp_path, HARNESS_TORCH_INDEX=url)
    assert "does not answer" in out and "--extra-index-url" not in torch_command(out)
    assert took < 60  # the probe's timeout is 5 s; pip's own retries would take minutes


def test_without_a_gpu_the_cpu_index_is_chosen_and_pypi_overrides_it(tmp_path):
    out, _ = dry_run(tmp_path)
    assert "https://download.pytorch.org/whl/cpu" in out  # added, or named as unreachable on a machine offline
    assert "setup [" in out and "installing torch 2.13.0" in out  # says what it is doing
    out, _ = dry_run(tmp_path, HARNESS_TORCH_INDEX="pypi")
    assert "download.pytorch.org" not in out and torch_command(out).endswith("torch==2.13.0")


def test_with_a_gpu_torch_comes_from_pips_own_index(tmp_path):
    out, _ = dry_run(tmp_path, gpu=True)
    assert "NVIDIA GPU is present" in out and "download.pytorch.org" not in out
    assert torch_command(out).endswith("torch==2.13.0")


def test_reports_and_runs_are_ignored_by_git():
    for path in ("report/index.html", "report/data/r0-index.js", "runs/x/run.json"):
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0, path
    assert subprocess.run(["git", "check-ignore", "-q", "harness/report/build.py"], cwd=ROOT).returncode == 1


def test_grade_help_shows_each_example_command_whole():
    help_text = subprocess.run([sys.executable, "-m", "harness", "grade", "--help"], cwd=ROOT, capture_output=True,
                               text=True, env={**os.environ, "COLUMNS": "100"}, check=True).stdout
    lines = help_text.split("examples:")[1].strip("\n").splitlines()
    commands = [i for i, line in enumerate(lines) if line.lstrip().startswith(("python -m", "OPENAI_API_KEY"))]
    for i in commands:  # a command continued with a backslash goes on with an indented option line
        j = i
        while lines[j].split("#")[0].rstrip().endswith("\\"):
            j += 1
            assert lines[j].startswith("      --"), lines[j]
        assert lines[j].count("python -m harness") <= 1 and len(lines[j]) < 120, lines[j]
    assert lines[-1].strip().startswith("--judge-base-url") and lines[-2].endswith("\\")


def test_pyproject_license_is_an_spdx_string_with_a_setuptools_that_reads_it():
    tomllib = pytest.importorskip("tomllib")

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    [req] = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    assert req == "setuptools>=77"  # the first release that takes `license` as an SPDX string
