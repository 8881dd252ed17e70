"""Accuracy beside speed: a decode sweep on the embedded model also grades GPQA at its configuration."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweep.config import load_config
from sweep.point_eval import config_id, eval_spec
from tests.sweep.conftest import read_records, run_cli, write_config

EVAL_DECODE = """kind = "decode"
model = "smollm2-135m"
threads = 1
dtype = "{dtype}"
context = 32
warmup_steps = 1
measured_steps = 2
points = [1, 2]
[engine]
kv_cache_gib = 0.05
[eval]
task = "gpqa"
limit = 2
samples = 1
max_tokens = 12
"""


@pytest.mark.slow
def test_decode_points_record_the_accuracy_of_their_configuration(tmp_path: Path):
    cfg = write_config(tmp_path, "acc", EVAL_DECODE.format(dtype="float32"))
    assert run_cli("decode", str(cfg), "--out-dir", str(tmp_path)) == 0
    records = read_records(tmp_path / "acc" / "results.jsonl")
    assert len(records) == 2 and all(r["status"] == "ok" for r in records)
    acc = records[0]["accuracy"]
    assert acc == records[1]["accuracy"]  # one configuration, one eval, recorded with every point
    assert acc["task"] == "gpqa" and acc["coverage_complete"] is True and acc["expected"] == 2
    assert 0.0 <= acc["pass@1"] <= 1.0 and acc["pass@1_stderr"] is not None
    run_dir = Path(acc["run_dir"])
    assert run_dir.parent == tmp_path / "acc" / "evals"  # the eval run lives under the sweep folder
    generations = [json.loads(x) for x in (run_dir / "generations.jsonl").read_text().splitlines()]
    assert len(generations) == 2 and all(g["finish_reason"] in ("stop", "length") for g in generations)
    engines = [g["engine"] for g in generations]  # the sweep's engine configuration generated them
    assert all(e["name"] == "native" and e["dtype"] == "fp32" and e["threads"] == 1 for e in engines)
    assert all(e["kv_cache_bytes"] == records[0]["provenance"]["engine"]["kv_cache_bytes"] for e in engines)
    summary = json.loads(next((run_dir / "grades").glob("rules*/summary.json")).read_text())
    assert summary["pass@1"] == acc["pass@1"] and acc["judge"] == summary["judge"]["id"]
    # a rerun with new points reuses the finished eval of the same configuration
    before = (run_dir / "generations.jsonl").stat().st_mtime_ns
    assert run_cli("decode", str(cfg), "--out-dir", str(tmp_path), "--points", "3") == 0
    assert (run_dir / "generations.jsonl").stat().st_mtime_ns == before
    assert read_records(tmp_path / "acc" / "results.jsonl")[-1]["accuracy"]["pass@1"] == acc["pass@1"]


def test_each_engine_configuration_gets_its_own_eval_folder(tmp_path: Path):
    fp32 = load_config(str(write_config(tmp_path, "a", EVAL_DECODE.format(dtype="float32"))))
    bf16 = load_config(str(write_config(tmp_path, "b", EVAL_DECODE.format(dtype="bfloat16"))))
    spec = eval_spec(fp32)
    assert spec is not None and spec.task == "gpqa" and spec.limit == 2
    assert config_id(fp32, "cpu", spec) != config_id(bf16, "cpu", spec)
    int4 = fp32.with_overrides(engine={**fp32.engine, "int4": False})
    assert config_id(int4, "cpu", spec) != config_id(fp32, "cpu", spec)
    kv8 = fp32.with_overrides(engine={**fp32.engine, "kv_cache_dtype": "int8"})
    assert config_id(kv8, "cpu", spec) not in (config_id(fp32, "cpu", spec), config_id(int4, "cpu", spec))
    from sweep.engine_session import engine_options
    assert engine_options(kv8, "cpu").kv_cache_dtype == "int8"  # the eval's engine caches K/V as the point's does


def test_a_bad_eval_table_is_an_error_naming_the_key(tmp_path: Path):
    cfg = load_config(str(write_config(tmp_path, "bad", EVAL_DECODE.format(dtype="float32") + "limmit = 3\n")))
    with pytest.raises(ValueError, match="limmit"):
        eval_spec(cfg)
    serve = load_config(str(write_config(tmp_path, "srv", 'kind = "serve"\npoints = [1]\n[eval]\ntask = "gpqa"\n')))
    with pytest.raises(ValueError, match="built-in engine"):
        eval_spec(serve)
