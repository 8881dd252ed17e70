"""DeepSeekMoE: sigmoid router with correction bias and grouped top-k, shared experts, batched expert matmuls."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.native.models.deepseek_v3_config import DeepseekV3Args


class DenseMLP(nn.Module):
    """SwiGLU MLP with gate and up fused into one matmul."""

    def __init__(self, hidden: int, inter: int):
        super().__init__()
        self.gate_up = nn.Parameter(torch.empty(2 * inter, hidden), False)
        self.down_proj = nn.Parameter(torch.empty(hidden, inter), False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g, u = F.linear(x, self.gate_up).chunk(2, dim=-1)
        return F.linear(F.silu(g) * u, self.down_proj)


class Router(nn.Module):
    """noaux_tc routing: the bias steers selection only; weights come from the unbiased sigmoid scores."""

    def __init__(self, args: DeepseekV3Args):
        super().__init__()
        self.args = args
        self.weight = nn.Parameter(torch.empty(args.n_routed_experts, args.hidden_size), False)
        self.e_score_correction_bias = nn.Parameter(torch.zeros(args.n_routed_experts), False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: [T, d] -> (weights [T, k] fp32, expert ids [T, k])."""
        a = self.args
        T = x.shape[0]
        # Routing in fp32 whatever the model dtype, as DeepSeek's reference and HF do.
        scores = F.linear(x.float(), self.weight.float()).sigmoid()
        choice = scores + self.e_score_correction_bias.float()
        per_group = a.n_routed_experts // a.n_group
        group_scores = choice.view(T, a.n_group, per_group).topk(min(2, per_group), dim=-1)[0].sum(-1)
        group_idx = group_scores.topk(a.topk_group, dim=-1, sorted=False)[1]
        group_mask = torch.zeros_like(group_scores, dtype=torch.bool).scatter_(1, group_idx, True)
        expert_mask = group_mask.unsqueeze(-1).expand(T, a.n_group, per_group).reshape(T, -1)
        idx = choice.masked_fill(~expert_mask, float("-inf")).topk(a.num_experts_per_tok, dim=-1, sorted=False)[1]
        w = scores.gather(1, idx)
        if a.norm_topk_prob:
            w = w / (w.sum(-1, keepdim=True) + 1e-20)
        return w * a.routed_scaling_factor, idx


class MoE(nn.Module):
    """Routed experts stored stacked ([E, 2I, d] and [E, d, I]) plus always-on shared experts."""

    def __init__(self, args: DeepseekV3Args):
        super().__init__()
        E, d, inter = args.n_routed_experts, args.hidden_size, args.moe_intermediate_size
        self.gate = Router(args)
        self.w_gate_up = nn.Parameter(torch.empty(E, 2 * inter, d), False)
        self.w_down = nn.Parameter(torch.empty(E, d, inter), False)
        self.shared_experts = DenseMLP(d, inter * args.n_shared_experts) if args.n_shared_experts else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T, d = x.shape
        w, idx = self.gate(x)
        k = idx.shape[1]
        # Sort the T*k (token, expert) pairs by expert so each active expert runs one matmul on its rows.
        flat = idx.reshape(-1)
        order = flat.argsort(stable=True)
        counts = torch.bincount(flat, minlength=self.w_gate_up.shape[0]).tolist()
        rows = x[order // k]
        out = torch.empty_like(rows)
        start = 0
        for e, n in enumerate(counts):
            if n == 0:
                continue
            g, u = F.linear(rows[start:start + n], self.w_gate_up[e]).chunk(2, dim=-1)
            out[start:start + n] = F.linear(F.silu(g) * u, self.w_down[e])
            start += n
        per_pair = torch.empty_like(out)
        per_pair[order] = out
        y = (per_pair.view(T, k, d) * w.to(x.dtype).unsqueeze(-1)).sum(1)
        if self.shared_experts is not None:
            y = y + self.shared_experts(x)
        return y
