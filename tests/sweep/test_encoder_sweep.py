"""Encoder sweep end to end on a tiny random ViT: records, chart, resume, OOM, cost, profiling."""
from __future__ import annotations

from pathlib import Path

from sweep.records import SCHEMA_VERSION
from tests.sweep.conftest import assert_chart, read_records, run_cli


def test_encoder_sweep_writes_records_and_chart(tiny_encoder, tmp_path: Path):
    cfg = tiny_encoder()
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "out")) == 0
    results = tmp_path / "out" / "tiny-enc" / "results.jsonl"
    records = read_records(results)
    assert [r["point"]["images"] for r in records] == [1, 2, 4]
    for r in records:
        assert r["schema_version"] == SCHEMA_VERSION and r["tag"] == "tiny-enc" and r["kind"] == "encoder"
        assert r["status"] == "ok" and r["profiled"] is False
        m = r["metrics"]
        assert m["latency_ms"] > 0 and len(m["step_times_ms"]) == 2
        # images/s is the batch over the median latency; patches follow from the 4x4 patch grid
        assert abs(m["images_per_s_per_gpu"] - r["point"]["images"] / (m["latency_ms"] / 1e3)) < 1e-6
        assert m["patches_per_s_per_gpu"] == m["images_per_s_per_gpu"] * 16
        assert r["steps"] == {"warmup": 1, "measured": 2}
        assert r["denominators"]["gpus"] == 1 and "CPU" in r["denominators"]["gpus_note"]
        assert "latency_ms" in r["definitions"]
        prov = r["provenance"]
        assert prov["device"] == "cpu" and prov["dtype"] == "float32" and prov["threads"] >= 1
        assert prov["git"]["commit"] and isinstance(prov["git"]["dirty"], bool)
        assert prov["versions"]["torch"] and prov["parallel"]["world_size"] == 1
        assert r["cost"] is None  # no prices given
    assert_chart(results.parent / "pareto.png")


def test_resume_skips_finished_points(tiny_encoder, tmp_path: Path, capsys):
    cfg = tiny_encoder()
    out = str(tmp_path / "out")
    assert run_cli("encoder", str(cfg), "--out-dir", out, "--points", "1,2") == 0
    results = tmp_path / "out" / "tiny-enc" / "results.jsonl"
    first = results.read_text()
    assert run_cli("encoder", str(cfg), "--out-dir", out) == 0  # config points 1, 2, 4
    records = read_records(results)
    assert results.read_text().startswith(first)
    assert [r["point"]["images"] for r in records] == [1, 2, 4]
    assert "2 finished point(s) skipped" in capsys.readouterr().err


def test_oom_at_one_point_is_recorded_and_sweep_continues(tiny_encoder, tmp_path: Path):
    # 10^7 images of 3x32x32 fp32 is ~123 GB: the host allocator refuses it at once.
    cfg = tiny_encoder(points="[1, 10000000, 2]")
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "out")) == 0
    results = tmp_path / "out" / "tiny-enc" / "results.jsonl"
    records = read_records(results)
    assert [(r["point"]["images"], r["status"]) for r in records] == [(1, "ok"), (10000000, "oom"), (2, "ok")]
    assert "allocate" in records[1]["reason"] and records[1]["metrics"] == {}
    assert_chart(results.parent / "pareto.png")
    # an OOM point counts as finished: a rerun does not try it again
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "out")) == 0
    assert len(read_records(results)) == 3


def test_cost_inputs_are_stored_with_dollars_per_million(tiny_encoder, tmp_path: Path):
    cfg = tiny_encoder(points="[2]")
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "out"), "--price-per-gpu-hour", "2.0",
                   "--power-kw", "1.0", "--pue", "1.2", "--price-per-kwh", "0.1", "--utilization", "0.5") == 0
    r = read_records(tmp_path / "out" / "tiny-enc" / "results.jsonl")[0]
    assert r["cost"]["inputs"] == {"price_per_gpu_hour": 2.0, "utilization": 0.5, "power_kw": 1.0, "pue": 1.2,
                                   "price_per_kwh": 0.1}
    rate = r["metrics"]["images_per_s_per_gpu"]
    expected = 1e6 * (2.0 + 1.0 * 1.2 * 0.1) / (3600 * rate * 0.5)
    assert abs(r["cost"]["dollars_per_million"]["images"] - expected) < 1e-9 * expected


def test_profile_writes_trace_and_marks_records(tiny_encoder, tmp_path: Path, monkeypatch):
    cfg = tiny_encoder(points="[1]")
    monkeypatch.setenv("PROFILE", "1")
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "out")) == 0
    folder = tmp_path / "out" / "tiny-enc"
    (r,) = read_records(folder / "results.jsonl")
    assert r["profiled"] is True
    traces = list((folder / "traces").glob("*.json"))
    assert len(traces) == 1 and traces[0].stat().st_size > 0
    # a profiled record never stands in for a headline run: without PROFILE the point runs again
    monkeypatch.setenv("PROFILE", "0")
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "out")) == 0
    assert [x["profiled"] for x in read_records(folder / "results.jsonl")] == [True, False]


def test_encoder_sweep_times_saved_weights(tmp_path: Path):
    from engine.native.vision import VisionConfig, VisionEncoder, save_vision_encoder
    from tests.sweep.conftest import write_config

    cfg = VisionConfig(image_size=48, patch_size=16, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64)
    folder = save_vision_encoder(VisionEncoder(cfg).init_random(1), tmp_path / "vit")
    tag = write_config(tmp_path, "vit-saved", f'kind = "encoder"\nthreads = 1\nmeasured_steps = 1\npoints = [2]\n'
                                              f'[vision]\nweights = "{folder}"\n')
    assert run_cli("encoder", str(tag), "--out-dir", str(tmp_path / "out")) == 0
    (r,) = read_records(tmp_path / "out" / "vit-saved" / "results.jsonl")
    assert r["status"] == "ok" and r["point"] == {"images": 2, "image_size": 48}
    assert r["metrics"]["patches_per_image"] == 9 and str(folder) in r["provenance"]["encoder"]
