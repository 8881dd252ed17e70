"""--tp 2 for the dense families and --ep 2 for Qwen3-MoE under torchrun (gloo, CPU processes) give the single
rank's greedy tokens and logits (the single rank equals HF: test_families.py, so HF stands in for it here)."""
from __future__ import annotations

import pytest
import torch

from engine.base import EngineError
from engine.native.models import model_class
from engine.native.shard import check_mode
from tests.engine_models.conftest import hf_greedy, load_hf, make_family
from tests.engine_native.test_tensor_parallel import _generate

PROMPTS = [[5, 9, 14, 3], [7, 7, 21, 30, 2, 11, 4, 8, 19]]  # tp_rank.py's; 12 new tokens outgrow Mistral's window


def _matches_hf(got: dict, folder) -> None:
    hf = load_hf(folder)
    want = [hf_greedy(hf, p, 12) for p in PROMPTS]
    assert got["tokens"] == [w[0] for w in want]
    assert torch.allclose(torch.tensor(got["logits"]), want[0][1][0], atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["qwen2", "qwen3", "mistral"])
def test_tp_2_equals_one_rank(family, tmp_path):
    folder = make_family(tmp_path / family, family)
    got = _generate(2, str(folder), tmp_path)
    _matches_hf(got, folder)
    assert got["stderr"].count("tensor parallel rank") == 2


@pytest.mark.slow
def test_qwen3_moe_ep_2_equals_one_rank_with_half_the_experts_each(tmp_path):
    # every layer sparse, weights not renormalised: the other settings than test_families.py
    folder = make_family(tmp_path / "qwen3moe", "qwen3moe", mlp_only_layers=[], norm_topk_prob=False)
    got = _generate(2, str(folder), tmp_path, mode="ep")
    _matches_hf(got, folder)
    whole = sum(t.numel() * 4 for n, t in load_hf(folder).state_dict().items() if ".experts." in n)
    assert got["routed_expert_bytes"] * 2 == whole


def test_tp_on_qwen3_moe_says_to_use_ep():
    with pytest.raises(EngineError, match=r"--tp does not apply to 'qwen3moe' models; use --ep"):
        check_mode(model_class("qwen3moe"), "tp", "qwen3moe")
    check_mode(model_class("Qwen3ForCausalLM"), "tp", "qwen3")
