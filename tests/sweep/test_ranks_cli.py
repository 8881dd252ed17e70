"""torchrun ranks, run_sweep.sh, and the CLI's refusals."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sweep.config import available_tags, load_config
from tests.sweep.conftest import assert_chart, read_records, run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_two_cpu_ranks_under_torchrun_write_one_file_from_rank_0(tiny_encoder, tmp_path: Path):
    cfg = tiny_encoder(points="[1, 2]", extra="parallel = { dp = 2 }")
    env = {**os.environ, "OUT_DIR": str(tmp_path / "out"), "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "sweep" / "run_sweep.sh"), "encoder", str(cfg)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    folder = tmp_path / "out" / "tiny-enc"
    assert sorted(p.name for p in folder.iterdir()) == ["pareto.png", "results.jsonl"]
    records = read_records(folder / "results.jsonl")
    assert [r["point"]["images"] for r in records] == [1, 2]  # one line per point, not one per rank
    for r in records:
        assert r["status"] == "ok"
        assert r["provenance"]["parallel"] == {"dp": 2, "tp": 1, "ep": 1, "world_size": 2, "backend": "gloo"}
        assert r["denominators"]["gpus"] == 2
        m = r["metrics"]
        # both ranks' images count, over the slowest rank's latency, divided by 2 devices
        assert m["images_per_s"] == pytest.approx(2 * r["point"]["images"] / (m["latency_ms"] / 1e3))
        assert m["images_per_s_per_gpu"] == pytest.approx(m["images_per_s"] / 2)
    assert proc.stdout.strip().endswith("results.jsonl") and proc.stdout.count("results.jsonl") == 1
    assert_chart(folder / "pareto.png")


def test_shipped_tags_load():
    tags = set(available_tags())
    assert {"pe-128k", "ce-128k", "ve-800", "pe-2k", "ce-2k", "ve-224", "serve-local"} <= tags
    for tag in tags:
        cfg = load_config(tag)
        assert cfg.tag == tag and cfg.points
    assert load_config("pe-128k").context == 131072 and load_config("ve-800").device == "cuda"


def test_wrong_kind_and_unknown_tag_are_clear_errors(tiny_encoder, capsys):
    assert run_cli("decode", str(tiny_encoder())) == 2
    assert "is a encoder config" in capsys.readouterr().err
    assert run_cli("encoder", "no-such-tag") == 2
    err = capsys.readouterr().err
    assert "no sweep config 'no-such-tag'" in err and "ve-224" in err


def test_unknown_config_key_is_named(tmp_path: Path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('kind = "encoder"\npoints = [1]\nbatchsize = 3\n')
    assert run_cli("encoder", str(cfg)) == 2
    assert "unknown key(s) batchsize" in capsys.readouterr().err


def test_gpu_tag_on_a_cpu_machine_says_so(tmp_path: Path, capsys):
    import torch
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert run_cli("encoder", "ve-800", "--out-dir", str(tmp_path)) == 2
    assert "CUDA is not available" in capsys.readouterr().err


def test_run_sweep_sh_without_arguments_prints_usage():
    proc = subprocess.run(["bash", str(ROOT / "sweep" / "run_sweep.sh")], capture_output=True, text=True)
    assert proc.returncode == 2 and "MODE TAG [CONTEXT] [NEXTN] [ACCEPT]" in proc.stdout


@pytest.mark.parametrize("parallel,kind,message", [
    ({"dp": 2, "tp": 2}, "decode", "dp = 2 and tp = 2 together are not supported"),
    ({"tp": 2, "ep": 2}, "prefill", "tp = 2 and ep = 2 together are not supported"),
    ({"ep": 2}, "encoder", "tp/ep apply to the prefill and decode sweeps, not encoder"),
    ({"pp": 2}, "decode", "unknown \\[parallel\\] key\\(s\\) pp; valid: dp, tp, ep, dp_attention"),
    ({"tp": 2, "dp_attention": True}, "decode", "dp_attention needs ep >= 2"),
    ({"tp": 0}, "decode", "tp must be positive integers"),
])
def test_parallel_table_refusals(parallel, kind, message):
    from sweep.config import SweepConfig
    with pytest.raises(ValueError, match=message):
        SweepConfig(tag="t", kind=kind, points=[1], path="t.toml", parallel=parallel)


def test_world_size_counts_every_process():
    from sweep.config import SweepConfig
    assert SweepConfig(tag="t", kind="decode", points=[1], parallel={"ep": 4}).world_size == 4
    assert SweepConfig(tag="t", kind="decode", points=[1], parallel={"dp": 3}).world_size == 3
