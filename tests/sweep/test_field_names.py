"""The serving sweep writes vLLM's and InferenceX's field names; old records stay readable."""
from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from sweep.cost_tiers import TIER_PRICES, parse_tier_prices
from sweep.plot import plot_results
from sweep.records import ResultsFile
from tests.support.scripted_server import Reply, ScriptedServer
from tests.sweep.conftest import assert_chart, read_records, run_cli, write_config

STATS = ("mean", "median", "std", "p50", "p90", "p99")


def test_results_use_vllm_and_inferencex_keys(tmp_path: Path):
    body = """kind = "serve"
warmup_steps = 0
points = [2]
[serve]
base_url = "http://127.0.0.1:1/v1"
model = "m"
input_tokens = 10
output_tokens = 5
requests_per_point = 6
gpus = 2
slo = { ttft_ms = 5000, tpot_ms = 5000 }
"""
    reply = Reply(text="a b c d e", delay_s=0.03, token_delay_s=0.02, prompt_tokens=10)
    with ScriptedServer(reply, model="m") as server:
        rc = run_cli("serve", str(write_config(tmp_path, "names", body)), "--base-url", server.base_url,
                     "--out-dir", str(tmp_path), "--gpu-type", "h200")
    assert rc == 0
    m = read_records(tmp_path / "names" / "results.jsonl")[0]["metrics"]
    for lat in ("ttft", "tpot", "itl", "e2el"):
        assert all(isinstance(m[f"{s}_{lat}_ms"], float) for s in STATS), lat
        assert m[f"p50_{lat}_ms"] == pytest.approx(m[f"median_{lat}_ms"])
        assert m[f"p99_{lat}_ms"] >= m[f"p90_{lat}_ms"] >= m[f"p50_{lat}_ms"]
    assert m["completed"] == 6 and m["total_input_tokens"] == 60 and m["total_output_tokens"] == 30
    assert m["request_throughput"] == pytest.approx(6 / m["duration"])
    assert m["output_throughput"] == pytest.approx(30 / m["duration"])
    assert m["total_token_throughput"] == pytest.approx(90 / m["duration"])
    assert m["request_goodput"] == m["goodput"] == pytest.approx(m["request_throughput"])
    # InferenceX: per GPU (serve.gpus = 2), interactivity = 1000 / TPOT per statistic
    assert m["tput_per_gpu"] == pytest.approx(m["total_token_throughput"] / 2)
    assert m["output_tput_per_gpu"] == pytest.approx(m["output_throughput"] / 2)
    for s in ("mean", "median", "p90", "p99"):
        assert m[f"{s}_intvty"] == pytest.approx(1e3 / m[f"{s}_tpot_ms"])
    assert m["intvty"] == m["median_intvty"]
    # three price tiers for an H200: $/GPU-hour / millions of tokens per GPU-hour
    for tier, price in zip("hnr", TIER_PRICES["h200"]):
        assert m[f"cost{tier}"] == pytest.approx(price / (m["tput_per_gpu"] * 3600 / 1e6))
        assert m[f"cost{tier}Output"] == pytest.approx(price / (m["output_tput_per_gpu"] * 3600 / 1e6))
    assert m["costhOutput"] > m["costh"]  # fewer tokens counted, higher price each


def test_std_is_the_population_deviation_as_numpy_computes_it():
    from sweep.field_names import latency_stats
    xs = [1.0, 2.0, 4.0, 9.0]
    stats = latency_stats("ttft", xs)
    assert stats["std_ttft_ms"] == pytest.approx(statistics.pstdev(xs))
    assert stats["p90_ttft_ms"] == pytest.approx(4.0 + 0.7 * 5.0)  # linear interpolation between 4 and 9


def test_tier_prices_parse_and_reject_bad_input():
    assert parse_tier_prices("h=1.5, n=2, r=1") == {"h": 1.5, "n": 2.0, "r": 1.0}
    with pytest.raises(ValueError, match="needs h, n and r"):
        parse_tier_prices("h=1")
    with pytest.raises(ValueError, match="x=1"):
        parse_tier_prices("h=1,n=1,x=1")


OLD_SERVE_RECORD = {  # a serving point as the sweep wrote it before the field's names (schema 1)
    "schema_version": 1, "tag": "old", "kind": "serve", "status": "ok",
    "point": {"concurrency": 4, "rate": None, "input_tokens": 64, "output_tokens": 32},
    "metrics": {"ttft_ms_p50": 80.0, "ttft_ms_p99": 120.0, "tpot_ms_p50": 25.0, "tpot_ms_p99": 40.0,
                "e2e_ms_p50": 900.0, "request_throughput_rps": 4.0, "output_tokens_per_s": 128.0,
                "output_tokens_per_s_per_gpu": 128.0, "tokens_per_s_per_user": 40.0, "wall_s": 2.0},
}


def test_old_serve_records_are_read_under_the_new_names(tmp_path: Path):
    folder = tmp_path / "old"
    folder.mkdir()
    second = json.loads(json.dumps(OLD_SERVE_RECORD))
    second["point"]["concurrency"], second["metrics"]["output_tokens_per_s_per_gpu"] = 8, 200.0
    second["metrics"]["tokens_per_s_per_user"] = 30.0
    (folder / "results.jsonl").write_text(json.dumps(OLD_SERVE_RECORD) + "\n" + json.dumps(second) + "\n")
    m = ResultsFile(folder / "results.jsonl").load()[0].metrics
    assert m["p50_ttft_ms"] == m["median_ttft_ms"] == 80.0 and m["p99_tpot_ms"] == 40.0
    assert m["median_e2el_ms"] == 900.0 and m["request_throughput"] == 4.0 and m["output_throughput"] == 128.0
    assert m["intvty"] == 40.0 and m["output_tput_per_gpu"] == 128.0 and m["duration"] == 2.0
    assert m["ttft_ms_p50"] == 80.0  # the old names stay too
    assert_chart(plot_results(folder / "results.jsonl"))
