"""`generate` with a top_p that underflows in float32 gives the greedy text; nonsense top_p is an argparse error."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generate(out: Path, *sampling: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "generate", "--task", "aime", "--limit", "1", "--samples",
                           "1", "--max-tokens", "6", "--threads", "2", "--no-progress", "--out", str(out), *sampling],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ))


def _response(out: Path) -> str:
    return json.loads((out / "generations.jsonl").read_text().splitlines()[0])["response"]


def test_generate_with_an_underflowing_top_p_gives_the_greedy_text(tmp_path):
    greedy = _generate(tmp_path / "greedy", "--temperature", "0")
    tiny = _generate(tmp_path / "tiny", "--temperature", "1", "--top-p", "1e-46")
    assert greedy.returncode == 0 and tiny.returncode == 0, greedy.stderr + tiny.stderr
    assert _response(tmp_path / "greedy")  # token 0 would decode to nothing
    assert _response(tmp_path / "tiny") == _response(tmp_path / "greedy")


def test_generate_rejects_a_top_p_outside_0_to_1_at_parse_time(tmp_path):
    for bad in ("0", "-0.5", "1.5", "nan"):
        r = _generate(tmp_path / "bad", "--top-p", bad)
        assert r.returncode == 2 and "argument --top-p" in r.stderr and "Traceback" not in r.stderr, r.stderr
