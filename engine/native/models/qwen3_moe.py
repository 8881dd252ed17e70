"""Qwen3-MoE: Qwen3's attention (RMSNorm on each q and k head) with softmax top-k routed experts, no shared expert.

Expert parallelism (`--ep N`) as for DeepSeek-V3 (see deepseek_v3_moe): each rank holds a contiguous 1/N of every
MoE layer's experts; attention, router, norms, embedding and head are replicated; one all-reduce per MoE layer
sums the ranks' partial outputs. Dense layers (mlp_only_layers, decoder_sparse_step) keep the Llama MLP.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from engine.native.config import ModelConfig
from engine.native.models.deepseek_v3_moe import routed_experts
from engine.native.models.llama import LlamaLayer, LlamaModel

ARCHITECTURES = {"qwen3moe": ("Qwen3MoeForCausalLM", "qwen3_moe")}
MODEL_CLASS = "Qwen3MoeModel"


class Qwen3MoeLayer(LlamaLayer):
    def __init__(self, config: ModelConfig, w: dict[str, torch.Tensor], index: int = 0):
        super().__init__(config, w, index)
        moe = config.extra["moe"]
        self.top_k, self.norm_topk_prob = moe["top_k"], moe["norm_topk_prob"]
        self.router = nn.Parameter(w["router"], False) if "router" in w else None
        self.w_gate_up = nn.Parameter(w["w_gate_up"], False) if "router" in w else None
        self.w_down = nn.Parameter(w["w_down"], False) if "router" in w else None
        self.ep = None  # a ParallelGroup when this layer holds experts [expert_start, expert_start + E) only
        self.expert_start = 0

    def _mlp(self, h: torch.Tensor) -> torch.Tensor:
        if self.router is None:
            return super()._mlp(h)
        # Softmax over every expert in fp32, top-k, optionally renormalised; weights in the model dtype (as HF).
        probs = torch.softmax(F.linear(h, self.router), dim=-1, dtype=torch.float32)
        w, idx = probs.topk(self.top_k, dim=-1)
        if self.norm_topk_prob:
            w = w / w.sum(-1, keepdim=True)
        y = routed_experts(h, w.to(h.dtype), idx, self.w_gate_up, self.w_down,
                           self.expert_start if self.ep is not None else None)
        return y if self.ep is None else self.ep.all_reduce(y)


class Qwen3MoeModel(LlamaModel):
    PARALLEL_MODE = "ep"
    LOGITS_NEED_PEERS = False  # replicated head: rank 0 computes logits alone
    LAYER = Qwen3MoeLayer

    @classmethod
    def convert_weights(cls, config: ModelConfig, hf: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Llama's layout plus, per MoE layer, the router and the experts stacked ([E, 2I, d] and [E, d, I])."""
        out = super().convert_weights(config, hf)
        experts = config.extra["moe"]["num_experts"]
        for i in config.extra["moe"]["sparse_layers"]:
            p = f"model.layers.{i}.mlp."
            out[f"layers.{i}.router"] = hf[p + "gate.weight"]
            gate, up, down = (_stacked(hf, p, name, experts) for name in ("gate_proj", "up_proj", "down_proj"))
            out[f"layers.{i}.w_gate_up"] = torch.cat((gate, up), dim=1)
            out[f"layers.{i}.w_down"] = down
        return out

    @classmethod
    def from_weights(cls, config: ModelConfig, tensors: dict[str, torch.Tensor], dtype: torch.dtype,
                     device: torch.device, parallel=None) -> "Qwen3MoeModel":
        """`tensors` are the whole model, or with `parallel` this rank's shard_weights() (its experts only)."""
        model = cls(config, tensors).to(device=device, dtype=dtype)
        if parallel is not None:
            for layer in model.layers:
                if layer.router is not None:
                    layer.ep, layer.expert_start = parallel, parallel.rank * layer.w_gate_up.shape[0]
        model.set_rope(dtype, device)
        return model

    @classmethod
    def shard_config(cls, config: ModelConfig, size: int) -> ModelConfig:
        experts = config.extra["moe"]["num_experts"]
        if experts % size:
            raise ValueError(f"--ep {size}: {experts} routed experts do not split over {size} ranks")
        return dataclasses.replace(config)

    @classmethod
    def shard_weights(cls, config: ModelConfig, get: Callable[[str], object], names: list[str], rank: int,
                      size: int) -> dict[str, torch.Tensor]:
        """Experts [rank * E/N, (rank + 1) * E/N) of each MoE layer (only those are read), everything else whole."""
        cls.shard_config(config, size)
        n = config.extra["moe"]["num_experts"] // size
        out = {}
        for name in names:
            t = get(name)
            out[name] = t[rank * n:(rank + 1) * n] if name.endswith(("w_gate_up", "w_down")) else t[:]
        return {k: v.contiguous() for k, v in out.items()}

    def routed_expert_bytes(self) -> int:
        """Bytes of routed experts this model holds (1/N of them per rank under --ep N)."""
        return sum(p.numel() * p.element_size() for layer in self.layers if layer.router is not None
                   for p in (layer.w_gate_up, layer.w_down))


def _stacked(hf: dict[str, torch.Tensor], prefix: str, name: str, experts: int) -> torch.Tensor:
    """[E, out, in]: from a GGUF file's one 3-D tensor, or from an HF checkpoint's one matrix per expert."""
    whole = hf.get(f"{prefix}experts.{name}.weight")
    if whole is not None:
        return whole
    return torch.stack([hf[f"{prefix}experts.{e}.{name}.weight"] for e in range(experts)])
