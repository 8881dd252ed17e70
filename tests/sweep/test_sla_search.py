"""SLA search against a real local server whose latency grows with load in a known way."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sweep.sla import parse_sla, per_request_slo, search
from tests.support.scripted_server import Reply, ScriptedServer
from tests.sweep.conftest import assert_chart, read_records, run_cli, write_config

STEP_S = 0.2  # time to first token = STEP_S x requests being answered (this one included)
TOKEN_S = 0.005


def loaded_server() -> ScriptedServer:
    """Each reply waits STEP_S x (replies still waiting + 1). Replies are scripted, so the server knows when each
    earlier wait ends; an earlier reply counts until then (never after its client has sent the next request)."""
    server = ScriptedServer(model="m")
    ends: list[float] = []

    def reply(body: dict) -> Reply:
        now = time.monotonic()
        load = 1 + sum(1 for end in ends if end > now)
        delay = STEP_S * load
        ends.append(now + delay)  # its first byte; the few token gaps after it are not counted
        return Reply(text="a b c d", delay_s=delay, token_delay_s=TOKEN_S)

    server.set_handler(reply)
    return server


def sla_config(folder: Path) -> Path:
    body = """kind = "serve"
warmup_steps = 0
points = [1, 8]
[serve]
base_url = "http://127.0.0.1:1/v1"
model = "m"
input_tokens = 8
output_tokens = 4
requests_per_point = 10
"""
    return write_config(folder, "sla-serve", body)


def test_bisection_finds_the_highest_concurrency_meeting_the_slo(tmp_path: Path):
    # TTFT at concurrency C is C x 200 ms in steady state, so p99 TTFT <= 1100 ms holds up to C = 5
    # (100 ms either side of the limit: room for a busy machine, which only ever adds latency).
    with loaded_server() as server:
        rc = run_cli("serve", str(sla_config(tmp_path)), "--base-url", server.base_url, "--out-dir", str(tmp_path),
                     "--sla", "ttft_p99_ms=1100,tpot_p99_ms=1000")
        assert server.errors == []
    assert rc == 0
    folder = tmp_path / "sla-serve"
    sla = json.loads((folder / "sla.json").read_text())
    assert sla["over"] == "concurrency" and sla["sla"] == {"p99_ttft_ms": 1100.0, "p99_tpot_ms": 1000.0}
    assert sla["best_point"]["concurrency"] == 5
    probed = [p["load"] for p in sla["probes"]]
    assert probed == [1, 8, 4, 6, 5]  # bisection: ends, then halves; never a linear scan
    assert [p["passed"] for p in sla["probes"]] == [True, False, True, False, True]
    records = {r["point"]["concurrency"]: r for r in read_records(folder / "results.jsonl")}
    assert sorted(records) == [1, 4, 5, 6, 8]
    at_best, over = records[5]["metrics"], records[6]["metrics"]
    assert 5 * STEP_S * 1e3 <= at_best["p99_ttft_ms"] <= 1100 < over["p99_ttft_ms"]
    # goodput counts requests meeting the per-request TTFT limit: all of them at C = 5, fewer at C = 8
    assert at_best["request_goodput"] == pytest.approx(at_best["request_throughput"])
    assert sla["best_metrics"]["request_goodput"] == pytest.approx(at_best["request_goodput"])
    assert records[8]["metrics"]["request_goodput"] < records[8]["metrics"]["request_throughput"]
    assert_chart(folder / "pareto.png")


def test_a_resumed_search_measures_nothing_again(tmp_path: Path):
    with loaded_server() as server:
        args = ["serve", str(sla_config(tmp_path)), "--base-url", server.base_url, "--out-dir", str(tmp_path),
                "--sla", "ttft_median_ms=700", "--sla-max", "4"]
        assert run_cli(*args) == 0
        first = len(server.requests)
        assert run_cli(*args) == 0
        assert len(server.requests) == first
    assert json.loads((tmp_path / "sla-serve" / "sla.json").read_text())["best_point"]["concurrency"] == 3


def test_rate_bisection_converges_on_a_known_boundary():
    # p99 TTFT = 100 ms x rate: the SLO of 450 ms is met up to 4.5 requests/s
    def measure(rate: float):
        return "ok", {"concurrency": 8, "rate": rate}, {"p99_ttft_ms": 100.0 * rate}

    result = search(measure, {"p99_ttft_ms": 450.0}, "rate", 1.0, 9.0)
    assert 4.5 - 8 / 64 <= result.best_point["rate"] <= 4.5
    assert len(result.probes) <= 2 + 6


def test_bad_sla_text_names_the_problem():
    assert parse_sla("ttft_p99_ms=2000, tpot_median_ms=50") == {"p99_ttft_ms": 2000.0, "median_tpot_ms": 50.0}
    assert per_request_slo({"p99_ttft_ms": 2000.0, "p90_itl_ms": 10.0}) == {"ttft_ms": 2000.0}
    with pytest.raises(ValueError, match="ttft_p99"):
        parse_sla("ttft_p99=2000")
    with pytest.raises(ValueError, match="statistic"):
        parse_sla("ttft_p42_ms=1")
