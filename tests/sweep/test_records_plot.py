"""Results files (torn lines, retries), Pareto frontier, --compare chart, and the point loop's error path."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweep.config import SweepConfig
from sweep.cost import CostInputs, dollars_per_million
from sweep.plot import pareto_front, plot_results
from sweep.ranks import Ranks
from sweep.records import ResultsFile, SweepRecord
from sweep.runner import Measurement, Outcome, run_sweep
from tests.sweep.conftest import assert_chart, read_records, run_cli


def test_torn_last_line_is_repaired(tmp_path: Path):
    f = ResultsFile(tmp_path / "results.jsonl")
    f.append(SweepRecord(tag="t", kind="encoder", point={"images": 1}, status="ok"))
    with f.path.open("a") as fh:
        fh.write('{"tag": "t", "kind": "enc')  # a crash mid-write
    assert [r.point for r in f.load()] == [{"images": 1}]
    assert f.path.read_text().count("\n") == 1


def test_error_points_are_retried_ok_and_oom_are_not(tmp_path: Path):
    f = ResultsFile(tmp_path / "results.jsonl")
    for images, status in ((1, "ok"), (2, "error"), (3, "oom")):
        f.append(SweepRecord(tag="t", kind="encoder", point={"images": images}, status=status))
    done = {json.loads(k)["point"]["images"] for k in f.finished_keys()}
    assert done == {1, 3}
    f.append(SweepRecord(tag="t", kind="encoder", point={"images": 2}, status="ok"))
    assert len(f.finished_keys()) == 3


def test_pareto_front():
    # x = latency (lower better), y = throughput
    pts = [(10, 100), (20, 150), (15, 90), (30, 140), (40, 300)]
    assert pareto_front(pts, x_higher_better=False) == [0, 1, 4]
    # x = tokens/s/user (higher better)
    assert pareto_front([(50, 10), (40, 20), (30, 15), (20, 30)], x_higher_better=True) == [3, 1, 0]


def test_cost_formula():
    inputs = CostInputs(price_per_gpu_hour=3.6, utilization=1.0)
    assert dollars_per_million(1000.0, inputs) == pytest.approx(1.0)  # $3.6/h at 1000 tok/s = $1 per M
    assert dollars_per_million(0.0, inputs) is None
    with pytest.raises(ValueError, match="utilization"):
        CostInputs(utilization=0)


class FlakyKind:
    """A minimal sweep kind whose middle point raises, to exercise the loop itself."""

    kind = "encoder"

    def points(self):
        return [{"images": n} for n in (1, 2, 3)]

    def setup(self): ...
    def describe(self): return {}
    def close(self): ...

    def measure(self, point, trace_path):
        if point["images"] == 2:
            raise ValueError("bad shape at this point")
        return Measurement([0.01 * point["images"]] * 2, work={"images": point["images"]})

    def summarise(self, point, step_times, work, infos, gpus):
        lat = step_times[0]
        return Outcome({"latency_ms": lat * 1e3, "images_per_s_per_gpu": work["images"] / lat / gpus}, {}, {"gpus": gpus})


def test_an_error_is_recorded_and_the_sweep_continues(tmp_path: Path):
    cfg = SweepConfig(tag="flaky", kind="encoder", points=[1, 2, 3])
    written = run_sweep(FlakyKind(), cfg, Ranks(), tmp_path, CostInputs(), {}, log=lambda s: None)
    assert [(r.point["images"], r.status) for r in written] == [(1, "ok"), (2, "error"), (3, "ok")]
    assert written[1].reason == "rank 0: ValueError: bad shape at this point"
    assert len(read_records(tmp_path / "results.jsonl")) == 3


def test_compare_overlays_two_result_files(tiny_encoder, tmp_path: Path):
    cfg = tiny_encoder(points="[1, 2]")
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "a")) == 0
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "b"), "--measured-steps", "1") == 0
    other = tmp_path / "b" / "tiny-enc" / "results.jsonl"
    assert run_cli("encoder", str(cfg), "--out-dir", str(tmp_path / "a"), "--plot-only", "--compare", str(other)) == 0
    assert_chart(tmp_path / "a" / "tiny-enc" / "compare.png")
    png = plot_results(tmp_path / "a" / "tiny-enc" / "results.jsonl", [other], tmp_path / "c.png")
    assert_chart(png)
    # the same tag from two places is told apart by the folder above it
    from sweep.records import load_records
    assert [label for label, _ in load_records([tmp_path / "a" / "tiny-enc", other])] == ["a/tiny-enc", "b/tiny-enc"]


def test_failure_classification():
    import torch

    from sweep.runner import classify_failure
    assert classify_failure(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))[0] == "oom"
    assert classify_failure(MemoryError("KV cache out of memory: 8 requests"))[0] == "oom"
    assert classify_failure(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried"))[0] == "oom"
    status, reason = classify_failure(ValueError("bad"))
    assert (status, reason) == ("error", "ValueError: bad")
