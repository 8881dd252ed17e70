"""DeepSeekMoE: sigmoid router with correction bias and grouped top-k, shared experts, batched expert matmuls.

Expert parallelism (`--ep N`): each rank holds a contiguous 1/N of the routed experts; the router, the
shared experts and everything outside the MoE are replicated, and every rank sees every token of the step
(rank 0 schedules one batch for all). Dispatch and combine are "all-gather + reduce" rather than all-to-all:
the tokens are already on every rank (the all-gather is free here), each rank runs its own experts on the
(token, expert) pairs routed to them, weights them, and one all-reduce of the [T, d] partial sums combines
them; the shared experts are added after it, once. Cost per MoE layer: one all-reduce of T x d activations
(a ring moves 2 (N-1)/N of it per rank), whatever the routing, with no token-count exchange and no load
imbalance in the communication; all-to-all would move only the routed rows (k/N of the tokens per rank)
but needs two exchanges plus counts. With DP attention (dp_attention.py) the tokens differ per rank, and
the same scheme first all-gathers every rank's rows (then each keeps its own rows of the sum); all-to-all
would move less there, at the price of per-step count exchanges and uneven buffers. With k = 2 routed
experts per token and 2 ranks the sum is bit-identical to one rank.
"""
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

    def __init__(self, args: DeepseekV3Args, num_local: int | None = None):
        super().__init__()
        E, d, inter = num_local or args.n_routed_experts, args.hidden_size, args.moe_intermediate_size
        self.ep = None  # a ParallelGroup when this layer holds experts [expert_start, expert_start + E) only
        self.expert_start = 0
        # DP attention (engine/native/dp_attention.py): this step's rows per rank, and this rank's first row
        # among them; x holds only this rank's rows, the experts see every rank's.
        self.dp_rows: list[int] | None = None
        self.dp_start = 0
        self.gate = Router(args)
        self.w_gate_up = nn.Parameter(torch.empty(E, 2 * inter, d), False)
        self.w_down = nn.Parameter(torch.empty(E, d, inter), False)
        self.shared_experts = DenseMLP(d, inter * args.n_shared_experts) if args.n_shared_experts else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dp_rows is None:
            y = self._routed(x)
            if self.ep is not None:
                self.ep.all_reduce(y)
        else:  # every rank's rows through this rank's experts, summed over ranks; keep this rank's rows
            y = self._routed(self.ep.all_gather_rows(x, self.dp_rows))
            self.ep.all_reduce(y)
            y = y[self.dp_start:self.dp_start + x.shape[0]]
        if self.shared_experts is not None:
            y = y + self.shared_experts(x)
        return y

    def _routed(self, x: torch.Tensor) -> torch.Tensor:
        """The routed experts' weighted sum for each row of x (this rank's experts only, under --ep)."""
        w, idx = self.gate(x)
        start = self.expert_start if self.ep is not None else None
        return routed_experts(x, w, idx, self.w_gate_up, self.w_down, start)


def routed_experts(x: torch.Tensor, w: torch.Tensor, idx: torch.Tensor, w_gate_up: torch.Tensor,
                   w_down: torch.Tensor, expert_start: int | None = None) -> torch.Tensor:
    """sum_k w[t, k] * SwiGLU expert idx[t, k] (x[t]) for every row t; the stacked weights are [E, 2I, d] and
    [E, d, I]. With expert_start (expert parallelism) they hold experts [expert_start, expert_start + E) only and
    pairs routed elsewhere add nothing."""
    T, d = x.shape
    k = idx.shape[1]
    # Sort the T*k (token, expert) pairs by expert so each active expert runs one matmul on its rows.
    flat = idx.reshape(-1)
    pairs = None
    if expert_start is not None:  # keep only the pairs routed to this rank's experts
        flat = flat - expert_start
        pairs = ((flat >= 0) & (flat < w_gate_up.shape[0])).nonzero().squeeze(1)
        flat = flat[pairs]
    order = flat.argsort(stable=True)
    counts = torch.bincount(flat, minlength=w_gate_up.shape[0]).tolist()
    src = order if pairs is None else pairs[order]  # which pair each sorted row is
    rows = x[src // k]
    out = torch.empty_like(rows)
    start = 0
    for e, n in enumerate(counts):
        if n == 0:
            continue
        g, u = F.linear(rows[start:start + n], w_gate_up[e]).chunk(2, dim=-1)
        out[start:start + n] = F.linear(F.silu(g) * u, w_down[e])
        start += n
    per_pair = torch.empty_like(out) if pairs is None else x.new_zeros(T * k, d)
    per_pair[src] = out
    return (per_pair.view(T, k, d) * w.to(x.dtype).unsqueeze(-1)).sum(1)
