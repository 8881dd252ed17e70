"""Launching ranks as docs/parallel.md says, with torchrun and gloo on 127.0.0.1: which process writes, what
rank 0 records when torchrun stops it, which --tp sizes a model takes, and Ascend ranks' set_device."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine_native.test_tensor_parallel import ROOT, _chat_llama, _env, _free_port

DOCS = ROOT / "docs" / "parallel.md"


def _harness_args(model: Path, out: str, *extra: str) -> list[str]:
    return ["-m", "harness", "generate", "--task", "aime", "--model", str(model), "--dtype", "float32",
            "--threads", "1", "--kv-cache-gib", "0.05", "--no-progress", "--out", out, *extra]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return _chat_llama(tmp_path_factory.mktemp("tiny-llama"))


def documented_multinode_flags() -> list[str]:
    """The torchrun flags of the multi-node command in docs/parallel.md, placeholders as written."""
    block = re.search(r"```bash\n(torchrun --nnodes[^`]*?)-m harness", DOCS.read_text()).group(1)
    return block.replace("\\\n", " ").split()[1:]


@pytest.mark.slow
def test_the_node_started_with_node_rank_0_writes_the_run(tiny, tmp_path):
    flags = documented_multinode_flags()
    assert "c10d" not in flags and "--master-addr" in flags  # a rendezvous that honours --node-rank
    port = str(_free_port())
    procs = {}
    for node in (1, 0):  # node 1 first: with c10d the first node to join tends to become rank 0
        args = [{"8": "1", "R": str(node), "HOST": "127.0.0.1", "29500": port}.get(f, f) for f in flags]
        folder = tmp_path / f"node{node}"
        folder.mkdir()
        cmd = [sys.executable, "-m", "torch.distributed.run", *args,
               *_harness_args(tiny, "runs/tp2", "--tp", "2", "--samples", "1", "--limit", "2", "--max-tokens", "4")]
        procs[node] = subprocess.Popen(cmd, cwd=folder, env=_env(tmp_path), stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
    errs = {}
    for node, p in procs.items():
        _, errs[node] = p.communicate(timeout=300)
        assert p.returncode == 0, errs[node][-3000:]
    written = tmp_path / "node0" / "runs" / "tp2"
    assert len((written / "generations.jsonl").read_text().splitlines()) == 2
    assert not (tmp_path / "node1" / "runs").exists()
    assert "rank 0 of 2 is on host " in errs[0] and f"(node rank 0): writes the run to {written}" in errs[0]
    assert "rank 0 of" not in errs[1]


def _worker_pids(agent: subprocess.Popen) -> dict[int, int]:
    """RANK -> pid of the processes torchrun started."""
    children = Path(f"/proc/{agent.pid}/task/{agent.pid}/children").read_text().split()
    ranks = {}
    for pid in map(int, children):
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        rank = next((int(e[5:]) for e in env if e.startswith(b"RANK=")), None)
        if rank is not None:
            ranks[rank] = pid
    return ranks


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["torchrun gets SIGTERM", "rank 1 is killed"])
def test_rank_0_records_unfinished_requests_when_torchrun_stops_it(tmp_path, stop):
    endless = _chat_llama(tmp_path / "endless", eos=False)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           *_harness_args(endless, str(out), "--tp", "2", "--samples", "2", "--max-tokens", "100000",
                          "--temperature", "1", "--concurrency", "4", "--dist-timeout", "60")]
    agent = subprocess.Popen(cmd, cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 300
        while not (out / "generations.jsonl").exists():  # opened once the engine is up and requests run
            assert time.monotonic() < deadline and agent.poll() is None, agent.communicate()[1][-3000:]
            time.sleep(0.2)
        time.sleep(1.5)  # steps are running
        if stop == "rank 1 is killed":
            subprocess.run(["kill", "-KILL", str(_worker_pids(agent)[1])], check=True)
        else:
            agent.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        _, err = agent.communicate(timeout=120)
        took = time.monotonic() - signalled
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    assert agent.returncode != 0
    records = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    spec = json.loads((out / "run.json").read_text())
    expected = {(i, s) for i in spec["item_ids"] for s in range(spec["samples"])}
    assert sorted((r["item_id"], r["sample"]) for r in records) == sorted(expected)  # each once, none lost
    errors = [r for r in records if r["finish_reason"] == "error"]
    assert errors and all(r["finish_reason"] in ("stop", "length", "error") for r in records)
    # torchrun's SIGTERM usually reaches rank 0 first; a failed collective seen first is recorded too
    assert all("SIGTERM" in r["error"] or "another rank may have died" in r["error"] for r in errors), errors[0]
    if stop == "torchrun gets SIGTERM":
        assert "rank 0: SIGTERM" in err and all("SIGTERM" in r["error"] for r in errors)
    assert not (out / ".lock").exists()  # released, so a rerun starts at once
    assert took < 25, err[-3000:]  # well inside torchrun's 30 s before SIGKILL
    print(err[-2500:])


@pytest.mark.slow
def test_tp_size_that_does_not_divide_the_heads_lists_the_sizes_that_do(tiny, tmp_path):
    from engine.native.gguf_weights import read_gguf_config
    from engine.native.model_registry import resolve_model
    from engine.native.models import model_class

    config, _, _ = read_gguf_config(resolve_model("smollm2-135m").path)  # 9 query heads, 3 KV heads, FFN 1536
    with pytest.raises(ValueError, match=r"this model splits over --tp 1, 3$"):
        model_class(config.architecture).shard_config(config, 2)
    # and through torchrun, on a model with 4 query heads, 2 KV heads and an FFN of 128
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "3",
                           *_harness_args(tiny, str(tmp_path / "run"), "--tp", "3", "--limit", "1", "--samples", "1")],
                          cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "--tp 3: 4 query heads do not split over 3 ranks" in proc.stderr
    assert "this model splits over --tp 1, 2, 4" in proc.stderr


ASCEND_RANK = """
import os, sys, torch
torch.utils.rename_privateuse1_backend("npu")  # what importing torch_npu does
calls = []
class FakeNPU:  # records what a rank asks of torch.npu
    @staticmethod
    def set_device(dev): calls.append(str(dev))
torch.npu = FakeNPU
os.environ["LOCAL_RANK"] = "3"
from engine.native.ranks import device_for
dev = device_for(torch.device("npu"))
# the sweeps' data-parallel ranks: a one-process gloo group stands in for the HCCL one it would form
torch.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=0, world_size=1)
os.environ.update(WORLD_SIZE="2", RANK="1", LOCAL_RANK="1")
from sweep.ranks import init_ranks
ranks = init_ranks("npu")
print(dev, ranks.backend, calls)
"""


def test_ascend_ranks_set_their_npu_as_cuda_ranks_set_their_gpu():
    """No Ascend here: torch.npu is a recorder registered the way torch_npu registers the device."""
    proc = subprocess.run([sys.executable, "-c", ASCEND_RANK, str(_free_port())], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "npu:3 hccl ['npu:3', 'npu:1']"
