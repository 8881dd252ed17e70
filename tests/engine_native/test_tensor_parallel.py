"""Tensor parallelism over torch.distributed (gloo, several CPU processes): the same greedy tokens as one rank,
logits as HF's, 1/N of the weights per rank, a clear end when a rank dies, and `generate` under torchrun."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sweep.tiny_llama import write_tiny_llama

ROOT = Path(__file__).resolve().parents[2]
RANK_SCRIPT = Path(__file__).with_name("tp_rank.py")


def _env(tmp_path: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
            "OMP_NUM_THREADS": "1"}


def _torchrun(n: int, args: list[str], tmp_path: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(n), *args]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _generate(n: int, model: str, tmp_path: Path, prompts: list[list[int]] | None = None, mode: str = "tp") -> dict:
    out = tmp_path / f"{mode}{n}.json"
    args = [str(RANK_SCRIPT), model, str(out), json.dumps(prompts) if prompts else "", mode]
    proc = _torchrun(n, args, tmp_path)
    return {**json.loads(out.read_text()), "stderr": proc.stderr}


def _chat_llama(folder: Path, eos: bool = True) -> Path:
    """The tiny Llama with a chat template (the harness renders chats); eos=False runs to the context limit."""
    write_tiny_llama(folder, seed=7)
    (folder / "chat_template.jinja").write_text("{% for m in messages %}{{ m['content'] }}\n{% endfor %}")
    if not eos:
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "eos_token_id": []}))
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return _chat_llama(tmp_path_factory.mktemp("tiny-llama"))


def test_tp_2_and_4_give_the_single_rank_greedy_tokens_and_hf_logits(tiny, tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    one = _generate(1, str(tiny), tmp_path)
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(tiny), dtype=torch.float32)
    with torch.no_grad():
        ref = hf(torch.tensor([[5, 9, 14, 3]])).logits[0, -1]
    assert torch.allclose(torch.tensor(one["logits"]), ref, atol=1e-5)
    for n in (2, 4):  # 4 ranks > 2 KV heads: each KV head is replicated on two ranks
        got = _generate(n, str(tiny), tmp_path)
        assert got["tokens"] == one["tokens"], n
        assert torch.allclose(torch.tensor(got["logits"]), ref, atol=1e-5), n
        assert got["stderr"].count("MB of weights resident") == n


def test_smollm2_tp_3_equals_tp_1_and_each_rank_holds_a_third(tmp_path):
    prompts = [[1, 9690, 198, 2683, 314, 253, 1230, 30], [1, 4093, 421, 1122, 314, 2681, 30]]
    one = _generate(1, "smollm2-135m", tmp_path, prompts)
    three = _generate(3, "smollm2-135m", tmp_path, prompts)
    assert three["tokens"] == one["tokens"]
    assert all(len(t) == 12 for t in one["tokens"])
    # 9 query heads and 3 KV heads split three ways; only the norms are replicated
    assert three["weight_bytes"] == pytest.approx(one["weight_bytes"] / 3, rel=0.01)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch_by_hand(n: int, args: list[str], tmp_path: Path) -> list[subprocess.Popen]:
    """The ranks torchrun would start, started here so the test can kill one of them."""
    port = _free_port()
    procs = []
    for rank in range(n):
        env = {**_env(tmp_path), "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(n),
               "LOCAL_WORLD_SIZE": str(n), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
        procs.append(subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=tmp_path, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return procs


@pytest.mark.parametrize("victim", [0, 1])
def test_killing_one_rank_ends_the_other_with_a_clear_error(tmp_path, victim):
    tiny = _chat_llama(tmp_path / "endless", eos=False)
    args = ["generate", "--task", "aime", "--model", str(tiny), "--tp", "2", "--dist-timeout", "20",
            "--dtype", "float32", "--threads", "1", "--samples", "4", "--max-tokens", "100000", "--temperature", "1",
            "--kv-cache-gib", "0.05", "--no-progress", "--out", str(tmp_path / "run")]
    procs = _launch_by_hand(2, args, tmp_path)
    try:
        deadline = time.monotonic() + 300
        while not (tmp_path / "run" / "run.json").exists():  # written once the engine is up
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
                [p.communicate()[1][-2000:] for p in procs]
            time.sleep(0.2)
        time.sleep(1)  # steps are running
        procs[victim].send_signal(signal.SIGKILL)
        survivor = procs[1 - victim]
        start = time.monotonic()
        _, err = survivor.communicate(timeout=120)
        assert time.monotonic() - start < 20 + 30  # the collective timeout, plus start-up slack
        assert survivor.returncode != 0
        assert "Traceback" not in err, err[-3000:]
        # mid-step the survivor sees a failed collective; between steps, a closed connection
        assert f"tensor parallel rank {1 - victim}" in err and ("may have died" in err or "lost rank 0" in err), err
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_generate_under_torchrun_writes_one_run_with_each_sample_once(tiny, tmp_path):
    out = tmp_path / "run"
    _torchrun(2, ["-m", "harness", "generate", "--task", "aime", "--model", str(tiny), "--tp", "2",
                  "--dtype", "float32", "--threads", "1", "--samples", "2", "--max-tokens", "8",
                  "--kv-cache-gib", "0.05", "--no-progress", "--out", str(out)], tmp_path)
    records = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    pairs = [(r["item_id"], r["sample"]) for r in records]
    assert len(pairs) == len(set(pairs)) and len(pairs) == 2 * len({r["item_id"] for r in records})
    assert all(r["finish_reason"] in ("stop", "length") for r in records)
    assert sorted(p.name for p in out.iterdir()) == ["generations.jsonl", "run.json"]
    assert json.loads((out / "run.json").read_text())["engine"]["tensor_parallel"] == 2
