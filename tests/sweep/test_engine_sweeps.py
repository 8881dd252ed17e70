"""Prefill and decode sweeps on the built-in engine: a tiny random Llama (fast), and SmolLM2 (slow)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.sweep.conftest import assert_chart, read_records, run_cli, write_config
from tests.sweep.tiny_llama import write_tiny_llama


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return write_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def engine_config(folder: Path, tag: str, kind: str, model: Path, points: str, measured_steps: int,
                  engine: str) -> Path:
    return write_config(folder, tag, f"""kind = "{kind}"
model = "{model}"
threads = 1
context = 64
warmup_steps = 1
measured_steps = {measured_steps}
points = {points}
[engine]
{engine}
""")


def prefill_config(folder: Path, model: Path, points: str = "[16, 64, 128]") -> Path:
    return engine_config(folder, "tiny-pre", "prefill", model, points, 2, "kv_cache_gib = 0.001")


def decode_config(folder: Path, model: Path, points: str, kv_gib: float = 0.001, fill: str = "unique") -> Path:
    engine = f'kv_cache_gib = {kv_gib}\ndecode_fill = "{fill}"'
    return engine_config(folder, "tiny-dec", "decode", model, points, 3, engine)


def test_prefill_sweep_times_whole_prefill_steps(tiny_model, tmp_path: Path):
    assert run_cli("prefill", str(prefill_config(tmp_path, tiny_model)), "--out-dir", str(tmp_path)) == 0
    records = read_records(tmp_path / "tiny-pre" / "results.jsonl")
    assert [(r["point"]["batch_tokens"], r["point"]["context"]) for r in records] == [(16, 64), (64, 64), (128, 64)]
    by_tokens = {r["point"]["batch_tokens"]: r["metrics"] for r in records}
    for r in records:
        m = r["metrics"]
        assert r["status"] == "ok" and m["latency_ms"] > 0 and m["cached_tokens"] == 0
        total_s = sum(m["step_times_ms"]) / 1e3
        assert m["input_tokens_per_s_per_gpu"] == pytest.approx(m["tokens_per_step"] * m["measured_steps"] / total_s)
        assert r["provenance"]["model"] == str(tiny_model) and r["provenance"]["engine"]["architecture"] == "llama"
    # 16 tokens per step walks a 64-token prompt in 4 steps; 128 per step prefills two prompts in one
    assert by_tokens[16]["measured_steps"] == 4 and by_tokens[16]["tokens_per_step"] == 16
    assert by_tokens[128]["tokens_per_step"] == 128 and by_tokens[128]["rounds"] == 2
    assert_chart(tmp_path / "tiny-pre" / "pareto.png")


def test_decode_sweep_times_decode_steps_over_filled_context(tiny_model, tmp_path: Path):
    assert run_cli("decode", str(decode_config(tmp_path, tiny_model, "[1, 3]")), "--out-dir", str(tmp_path),
                   "--price-per-gpu-hour", "3.6") == 0
    records = read_records(tmp_path / "tiny-dec" / "results.jsonl")
    assert [r["point"] for r in records] == [{"requests": n, "context": 64, "nextn": 0, "accept": None} for n in (1, 3)]
    for r in records:
        m = r["metrics"]
        assert r["status"] == "ok" and len(m["step_times_ms"]) == 3 and r["steps"] == {"warmup": 1, "measured": 3}
        assert m["tokens_per_s_per_user"] == pytest.approx(1e3 / m["latency_ms"])
        assert m["output_tokens_per_s_per_gpu"] == pytest.approx(r["point"]["requests"] * m["tokens_per_s_per_user"])
        # $3.6 per GPU-hour = $1e-3 per second, so $/M = 1000 / (tokens/s)
        assert r["cost"]["dollars_per_million"]["output_tokens"] == pytest.approx(1e3 / m["output_tokens_per_s_per_gpu"])
        assert r["provenance"]["decode_fill"] == "unique"
    assert_chart(tmp_path / "tiny-dec" / "pareto.png")


def test_decode_point_beyond_the_kv_cache_is_oom_and_the_sweep_continues(tiny_model, tmp_path: Path):
    # ~419 KV tokens (26 blocks): one request of 64 + steps fits, eight do not
    cfg = decode_config(tmp_path, tiny_model, "[1, 8, 2]", kv_gib=0.0002)
    assert run_cli("decode", str(cfg), "--out-dir", str(tmp_path)) == 0
    records = read_records(tmp_path / "tiny-dec" / "results.jsonl")
    assert [(r["point"]["requests"], r["status"]) for r in records] == [(1, "ok"), (8, "oom"), (2, "ok")]
    assert "KV cache out of memory" in records[1]["reason"]


def test_shared_prefix_fill_still_decodes_every_request(tiny_model, tmp_path: Path):
    cfg = decode_config(tmp_path, tiny_model, "[4]", fill="shared_prefix")
    assert run_cli("decode", str(cfg), "--out-dir", str(tmp_path)) == 0
    (r,) = read_records(tmp_path / "tiny-dec" / "results.jsonl")
    assert r["status"] == "ok" and r["provenance"]["decode_fill"] == "shared_prefix"


def test_nextn_on_a_model_without_draft_heads_is_refused(tiny_model, tmp_path: Path, capsys):
    cfg = decode_config(tmp_path, tiny_model, "[1]")
    assert run_cli("decode", str(cfg), "--nextn", "3", "--accept", "0.75", "--out-dir", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "no draft (MTP) heads" in err and "llama" in err
    assert not (tmp_path / "tiny-dec" / "results.jsonl").exists()


@pytest.mark.slow
def test_smollm2_decode_and_prefill_cpu_scale(tmp_path: Path):
    """The real default model through both sweeps at a small scale."""
    pre = write_config(tmp_path, "s-pre", 'kind = "prefill"\nmodel = "smollm2-135m"\nthreads = 1\ncontext = 64\n'
                                          'warmup_steps = 1\nmeasured_steps = 1\npoints = [32, 64]\n')
    dec = write_config(tmp_path, "s-dec", 'kind = "decode"\nmodel = "smollm2-135m"\nthreads = 1\ncontext = 32\n'
                                          'warmup_steps = 1\nmeasured_steps = 2\npoints = [1, 2]\n')
    assert run_cli("prefill", str(pre), "--out-dir", str(tmp_path)) == 0
    assert run_cli("decode", str(dec), "--out-dir", str(tmp_path)) == 0
    for tag in ("s-pre", "s-dec"):
        assert [r["status"] for r in read_records(tmp_path / tag / "results.jsonl")] == ["ok", "ok"]
        assert_chart(tmp_path / tag / "pareto.png")


@pytest.mark.slow
def test_decode_with_mtp_speculation_reports_target_and_realised_acceptance(tmp_path: Path):
    """nextn 3 at synthetic p 0.75 on a tiny DeepSeek-V3-style checkpoint with an MTP module."""
    pytest.importorskip("transformers")
    pytest.importorskip("engine.native.spec_engine")
    from tests.engine_deepseek.conftest import make_checkpoint
    from tests.sweep.tiny_llama import write_word_tokenizer

    ckpt = make_checkpoint(tmp_path / "dsv3", seed=3, predictable=0.14, eos_token_id=None)
    write_word_tokenizer(ckpt, 97)
    cfg = write_config(tmp_path, "tiny-mtp", f"""kind = "decode"
model = "{ckpt}"
context = 32
warmup_steps = 1
measured_steps = 12
points = [4]
[engine]
kv_cache_gib = 0.01
""")
    assert run_cli("decode", str(cfg), "--nextn", "3", "--accept", "0.75", "--out-dir", str(tmp_path)) == 0
    (r,) = read_records(tmp_path / "tiny-mtp" / "results.jsonl")
    assert r["status"] == "ok" and r["point"] == {"requests": 4, "context": 32, "nextn": 3, "accept": 0.75}
    m = r["metrics"]
    assert m["acceptance_length_target"] == pytest.approx(1 + 0.75 + 0.75 ** 2 + 0.75 ** 3)
    assert m["drafts"] == 4 * 12
    # every request gains 1 + accepted drafts per step, so tokens per request per step is the realised AL
    assert m["tokens_per_request_per_step"] == pytest.approx(m["acceptance_length"])
    assert abs(m["acceptance_length"] - m["acceptance_length_target"]) < 0.6  # 48 draws, sd ~0.15
    assert m["tokens_per_s_per_user"] == pytest.approx(m["acceptance_length"] * 1e3 / m["latency_ms"])
    assert "1 + p + p^2" in r["definitions"]["acceptance"]
    assert_chart(tmp_path / "tiny-mtp" / "pareto.png")


@pytest.mark.slow
def test_decode_under_torchrun_two_ranks(tiny_model, tmp_path: Path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    cfg = decode_config(tmp_path, tiny_model, "[1, 4]")
    cfg.write_text(cfg.read_text() + "[parallel]\ndp = 2\n")
    env = {**os.environ, "OUT_DIR": str(tmp_path / "out"), "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(root / "sweep" / "run_sweep.sh"), "decode", str(cfg)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = read_records(tmp_path / "out" / "tiny-dec" / "results.jsonl")
    assert [r["point"]["requests"] for r in records] == [1, 4]
    for r in records:
        m = r["metrics"]
        assert r["status"] == "ok" and r["provenance"]["parallel"]["world_size"] == 2
        # two ranks of R requests each over the slowest rank's step time, divided by 2 devices
        assert m["output_tokens_per_s"] == pytest.approx(2 * r["point"]["requests"] * 1e3 / m["latency_ms"])
        assert m["output_tokens_per_s_per_gpu"] == pytest.approx(m["output_tokens_per_s"] / 2)


@pytest.mark.parametrize("mode", ["decode", "prefill"])
def test_tensor_parallel_sweep_under_torchrun_divides_by_the_world_size(mode, tiny_model, tmp_path: Path):
    """[parallel] tp = 2: one engine over two processes (run_sweep.sh launches both); rank 0 writes the records,
    and per-device rates are the engine's rate over 2 devices."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    make = decode_config if mode == "decode" else prefill_config
    cfg = make(tmp_path, tiny_model, "[1, 4]" if mode == "decode" else "[32, 128]")
    cfg.write_text(cfg.read_text() + "[parallel]\ntp = 2\n")
    env = {**os.environ, "OUT_DIR": str(tmp_path / "out"), "PYTHON": sys.executable, "OMP_NUM_THREADS": "1",
           "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(["bash", str(root / "sweep" / "run_sweep.sh"), mode, str(cfg)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("tensor parallel rank") == 2  # both ranks loaded a half
    records = read_records(tmp_path / "out" / cfg.stem / "results.jsonl")
    assert len(records) == 2  # one record per point: only rank 0 writes
    for r in records:
        m = r["metrics"]
        assert r["status"] == "ok", r.get("reason")
        assert r["provenance"]["parallel"] == {"dp": 1, "tp": 2, "ep": 1, "world_size": 2, "backend": "gloo"}
        assert r["provenance"]["engine"]["tensor_parallel"] == 2 and r["denominators"]["gpus"] == 2
        if mode == "decode":  # R requests of one engine per step, over the median step, divided by 2 devices
            assert m["output_tokens_per_s"] == pytest.approx(r["point"]["requests"] * 1e3 / m["latency_ms"])
            assert m["output_tokens_per_s_per_gpu"] == pytest.approx(m["output_tokens_per_s"] / 2)
        else:  # the engine's tokens per step (not halved) over the measured time, divided by 2 devices
            total_s = sum(m["step_times_ms"]) / 1e3
            assert m["tokens_per_step"] == r["point"]["batch_tokens"]  # 32: half a prompt; 128: two prompts
            assert m["input_tokens_per_s"] == pytest.approx(m["tokens_per_step"] * m["measured_steps"] / total_s)
            assert m["input_tokens_per_s_per_gpu"] == pytest.approx(m["input_tokens_per_s"] / 2)


def test_prefill_with_a_cached_prefix_counts_cached_tokens_apart(tiny_model, tmp_path: Path):
    cfg = prefill_config(tmp_path, tiny_model, "[64]")
    cfg.write_text(cfg.read_text() + "cached_prefix = 32\n")
    assert run_cli("prefill", str(cfg), "--out-dir", str(tmp_path)) == 0
    (r,) = read_records(tmp_path / "tiny-pre" / "results.jsonl")
    m = r["metrics"]
    # each 64-token prompt: 32 tokens (two blocks) from the cache, 32 computed in one step
    assert r["status"] == "ok" and m["measured_steps"] == 2
    assert m["tokens_per_step"] == 32 and m["cached_tokens"] == 2 * 32
    total_s = sum(m["step_times_ms"]) / 1e3
    assert m["input_tokens_per_s_per_gpu"] == pytest.approx(2 * 32 / total_s)
    assert r["provenance"]["cached_prefix"] == 32
