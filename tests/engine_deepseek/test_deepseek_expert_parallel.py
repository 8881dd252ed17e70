"""Expert parallelism for DeepSeek-V3 over torch.distributed (gloo, two CPU processes): the same greedy tokens
as one rank, with and without MTP speculative decoding and DP attention, half the routed experts per rank,
clear flag errors."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.engine_deepseek.conftest import build_engine, prompts_of, run_requests
from engine.base import EngineError, SamplingParams
from engine.native.spec_engine import SpecLLMEngine

ROOT = Path(__file__).resolve().parents[2]
RANK_SCRIPT = Path(__file__).with_name("ep_rank.py")


def _torchrun(n: int, args: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(n), *args]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.mark.parametrize("which,nextn,dp_attention", [("tiny_folder", 0, False), ("predictable_folder", 2, False),
                                                       ("tiny_folder", 0, True), ("predictable_folder", 3, True)])
def test_ep_2_gives_the_single_rank_greedy_tokens(request, which, nextn, dp_attention, engine_cache_dir, tmp_path):
    folder = request.getfixturevalue(which)
    # Different lengths and budgets: chunked prefills, requests ending early, steps where a DP rank has no rows.
    job = {"prompts": prompts_of([5, 17, 9, 26, 3], seed=6), "max_tokens": [20, 6, 20, 12, 3]}
    one = build_engine(SpecLLMEngine, folder, nextn=0, max_num_batched_tokens=16)
    ref = run_requests(one, job["prompts"], [SamplingParams(max_tokens=m) for m in job["max_tokens"]])
    assert all(o.error is None for o in ref)
    out = tmp_path / "ep2.json"
    proc = _torchrun(2, [str(RANK_SCRIPT), str(folder), str(out), str(nextn), str(int(dp_attention)),
                         json.dumps(job)], engine_cache_dir)
    got = json.loads(out.read_text())
    assert got["errors"] == [None] * len(job["prompts"])
    assert got["tokens"] == [o.token_ids for o in ref]
    if dp_attention:  # both ranks ran attention on their own requests, and some steps left one rank idle
        assert min(got["rows_per_rank"]) > 0 and got["idle_rank_steps"] > 0, got
    if nextn:  # the drafter ran on rank 0 and its drafts were mostly accepted
        assert got["num_drafts"] > 0 and got["accepted"] > got["num_drafts"] // 2
    # each rank holds half of the main layers' routed experts, and says so at startup
    assert got["routed_expert_bytes"] == one.model.routed_expert_bytes() // 2
    assert proc.stderr.count("expert parallel rank") == 2 and "routed experts" in proc.stderr
    d = got["describe"]
    assert d["expert_parallel"] == 2 and d["tensor_parallel"] == 1 and d["dp_attention"] == dp_attention


def test_shard_weights_reads_only_this_ranks_experts_and_mtp_on_rank_0(tiny_folder, engine_cache_dir):
    from engine.native.model_registry import resolve_model
    from engine.native.models.deepseek_v3 import DeepseekV3Model
    from engine.native.weight_cache import load_weights
    weights = load_weights(resolve_model(str(tiny_folder)), torch.float32)
    t = weights.tensors
    read = []

    def get(name):
        read.append(name)
        return t[name]

    shards = [DeepseekV3Model.shard_weights(weights.config, get, list(t), r, 2) for r in range(2)]
    w = "layers.1.mlp.w_gate_up"
    assert torch.equal(torch.cat([shards[0][w], shards[1][w]]), t[w]) and shards[1][w].shape[0] == 4
    assert any(k.startswith("mtp.") for k in shards[0]) and not any(k.startswith("mtp.") for k in shards[1])
    assert torch.equal(shards[1]["layers.1.mlp.shared_experts.down_proj"], t["layers.1.mlp.shared_experts.down_proj"])
    with pytest.raises(ValueError, match="8 routed experts do not split over 3 ranks"):
        DeepseekV3Model.shard_weights(weights.config, get, list(t), 0, 3)


def test_tp_on_deepseek_and_ep_on_llama_are_clear_errors():
    from engine.native.models.deepseek_v3 import DeepseekV3Model
    from engine.native.models.llama import LlamaModel
    from engine.native.shard import check_mode
    with pytest.raises(EngineError, match="--tp does not apply to 'DeepseekV3ForCausalLM'.*use --ep"):
        check_mode(DeepseekV3Model, "tp", "DeepseekV3ForCausalLM")
    with pytest.raises(EngineError, match="--ep does not apply to 'llama'.*use --tp"):
        check_mode(LlamaModel, "ep", "llama")
    check_mode(DeepseekV3Model, "ep", "DeepseekV3ForCausalLM")


def test_parallel_flags(capsys):
    from harness.commands.native_flags import PARALLEL_FLAGS, add_engine_arguments, engine_fields
    p = argparse.ArgumentParser()
    add_engine_arguments(p, PARALLEL_FLAGS)
    assert engine_fields(p.parse_args(["--ep", "2"]), PARALLEL_FLAGS) == {
        "tp": 1, "ep": 2, "dp_attention": False, "dist_timeout_s": 300.0}
    assert engine_fields(p.parse_args([]), PARALLEL_FLAGS) == {
        "tp": 1, "ep": 1, "dp_attention": False, "dist_timeout_s": 300.0}
    assert engine_fields(p.parse_args(["--ep", "2", "--dp-attention"]), PARALLEL_FLAGS)["dp_attention"] is True
    with pytest.raises(ValueError, match="--dp-attention .* needs --ep 2"):
        engine_fields(p.parse_args(["--dp-attention"]), PARALLEL_FLAGS)
    with pytest.raises(ValueError, match="--tp 2 and --ep 2 together"):
        engine_fields(p.parse_args(["--tp", "2", "--ep", "2"]), PARALLEL_FLAGS)
    with pytest.raises(SystemExit):
        p.parse_args(["--ep", "0"])
    assert "argument --ep: must be >= 1, got 0" in capsys.readouterr().err


def test_generate_under_torchrun_with_ep_dp_attention_and_mtp_writes_one_run(predictable_folder, engine_cache_dir, tmp_path):
    out = tmp_path / "run"
    _torchrun(2, ["-m", "harness", "generate", "--task", "aime", "--model", str(predictable_folder), "--ep", "2",
                  "--dp-attention", "--nextn", "2", "--dtype", "float32", "--threads", "1", "--samples", "2", "--max-tokens", "6",
                  "--kv-cache-gib", "0.005", "--no-progress", "--out", str(out)], engine_cache_dir)
    records = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    pairs = [(r["item_id"], r["sample"]) for r in records]
    assert len(pairs) == len(set(pairs)) and len(pairs) == 2 * len({r["item_id"] for r in records})
    assert all(r["finish_reason"] in ("stop", "length") for r in records)
    engine = json.loads((out / "run.json").read_text())["engine"]
    assert engine["expert_parallel"] == 2 and engine["dp_attention"] and engine["nextn"] == 2


def test_decode_sweep_with_dp_attention_counts_requests_per_rank(tiny_folder, tmp_path):
    """[parallel] ep = 2, dp_attention: a point's R is requests per attention rank (2R in the engine), and
    per-device throughput is the engine's over the 2 devices."""
    cfg = tmp_path / "tiny-ds-dec.toml"
    cfg.write_text(f'kind = "decode"\nmodel = "{tiny_folder}"\nthreads = 1\ncontext = 24\nwarmup_steps = 1\n'
                   'measured_steps = 3\npoints = [1, 3]\n[engine]\nkv_cache_gib = 0.005\nblock_size = 4\n'
                   '[parallel]\nep = 2\ndp_attention = true\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OUT_DIR": str(tmp_path / "out"), "PYTHON": sys.executable,
           "OMP_NUM_THREADS": "1", "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(["bash", str(ROOT / "sweep" / "run_sweep.sh"), "decode", str(cfg)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in (tmp_path / "out" / "tiny-ds-dec" / "results.jsonl").read_text().splitlines()]
    assert [r["point"]["requests"] for r in records] == [1, 3]
    for r in records:
        m = r["metrics"]
        assert r["status"] == "ok", r.get("reason")
        assert r["provenance"]["parallel"]["world_size"] == 2 and r["provenance"]["engine"]["dp_attention"]
        assert m["output_tokens_per_s"] == pytest.approx(2 * r["point"]["requests"] * 1e3 / m["latency_ms"])
        assert m["output_tokens_per_s_per_gpu"] == pytest.approx(m["output_tokens_per_s"] / 2)
