"""Speculative decoding pieces: draft-token acceptance (greedy, rejection sampling, synthetic) and accounting.

Acceptance length (AL) = 1 + accepted / drafts, acceptance rate = accepted / drafted tokens (NOTES.md
conventions, as in vLLM and SGLang). Rejection sampling follows Leviathan et al. 2023 / Chen et al. 2023:
accept draft x with probability min(1, p(x)/q(x)); on rejection sample from norm(max(p - q, 0)); if every
draft is accepted, sample a bonus token from p. The output then has exactly the target distribution p.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch

from engine.base import SamplingParams
from engine.native.sampler import draw, filtered_probs
from engine.native.sequence import is_greedy


@dataclass
class SpecStats:
    """Draft accounting for one request or a whole engine; `accepted_per_position[i]` counts draft i+1 accepted."""

    num_drafts: int = 0  # verify rounds that carried drafts
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    accepted_per_position: list[int] = field(default_factory=list)

    def record(self, num_drafted: int, num_accepted: int) -> None:
        self.num_drafts += 1
        self.num_draft_tokens += num_drafted
        self.num_accepted_tokens += num_accepted
        if len(self.accepted_per_position) < num_drafted:
            self.accepted_per_position += [0] * (num_drafted - len(self.accepted_per_position))
        for i in range(num_accepted):
            self.accepted_per_position[i] += 1

    @property
    def acceptance_rate(self) -> float:
        return self.num_accepted_tokens / self.num_draft_tokens if self.num_draft_tokens else 0.0

    @property
    def mean_acceptance_length(self) -> float:
        return 1.0 + self.num_accepted_tokens / self.num_drafts if self.num_drafts else 1.0

    @property
    def acceptance_per_position(self) -> list[float]:
        """Fraction of rounds in which draft position i (1-based i+1) was accepted."""
        return [n / self.num_drafts for n in self.accepted_per_position] if self.num_drafts else []

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(acceptance_rate=self.acceptance_rate, mean_acceptance_length=self.mean_acceptance_length,
                 acceptance_per_position=self.acceptance_per_position)
        return d


class SyntheticAcceptance:
    """Benchmark mode: draft i is accepted iff all earlier ones were and a seeded uniform < p (AL = 1+p+..+p^n;
    sweep/acceptance.py states the definition that sweeps record)."""

    def __init__(self, p: float, seed: int = 0):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"synthetic acceptance must be in [0, 1], got {p!r}")
        self.p = p
        self.generator = torch.Generator().manual_seed(seed)

    def num_accepted(self, num_drafted: int) -> int:
        u = torch.rand(num_drafted, generator=self.generator)
        n = 0
        while n < num_drafted and float(u[n]) < self.p:
            n += 1
        return n

    @staticmethod
    def expected_length(p: float, nextn: int) -> float:
        return float(sum(p ** i for i in range(nextn + 1)))


def accept_greedy(drafts: list[int], target_logits: torch.Tensor) -> tuple[int, list[int]]:
    """target_logits: [k+1, V]. Returns (accepted drafts, emitted tokens incl. the correction/bonus token)."""
    best = target_logits.argmax(-1).tolist()
    n = 0
    while n < len(drafts) and drafts[n] == best[n]:
        n += 1
    return n, drafts[:n] + [best[n]]


def accept_rejection(drafts: list[int], draft_probs: torch.Tensor, target_probs: torch.Tensor,
                     generator: torch.Generator | None) -> tuple[int, list[int]]:
    """draft_probs: [k, V] (what drafts were drawn from); target_probs: [k+1, V]. Exact target distribution."""
    for i, x in enumerate(drafts):
        p, q = float(target_probs[i, x]), float(draft_probs[i, x])
        u = float(torch.rand((), generator=generator))
        if q > 0 and u < min(1.0, p / q):
            continue
        residual = (target_probs[i] - draft_probs[i]).clamp_min(0)
        s = float(residual.sum())
        # p == q on the support leaves no residual mass; then p itself is the right distribution.
        return i, drafts[:i] + [_draw_one(residual / s if s > 0 else target_probs[i], generator)]
    return len(drafts), drafts + [_draw_one(target_probs[len(drafts)], generator)]


def accept_synthetic(drafts: list[int], target_logits: torch.Tensor, synthetic: SyntheticAcceptance,
                     params: SamplingParams, generator: torch.Generator | None) -> tuple[int, list[int]]:
    """Forced acceptance for benchmarks: the next token after the accepted drafts comes from the target."""
    n = synthetic.num_accepted(len(drafts))
    row = target_logits[n]
    nxt = int(row.argmax()) if is_greedy(params) else _draw_one(filtered_probs(row[None], [params])[0], generator)
    return n, drafts[:n] + [nxt]


def _draw_one(probs: torch.Tensor, generator: torch.Generator | None) -> int:
    return int(draw(probs[None], [generator])[0])
