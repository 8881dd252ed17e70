"""Seeded synthetic acceptance for speculative-decoding benchmarks.

Definition: each of the nextn draft positions is accepted with conditional probability p given that
every earlier position was accepted; the first rejection ends the run. Tokens gained per step are
1 (the verified/bonus token) + accepted drafts, so the expected acceptance length is
AL(p, n) = 1 + p + p^2 + ... + p^n. (This is not "fraction p of drafted tokens accepted", under
which nextn = 3, 0.75 would give AL = 3.25 rather than 2.73.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

DEFINITION = ("synthetic acceptance: draft position i is accepted with conditional probability p given "
              "positions 1..i-1 accepted; acceptance length AL = 1 + accepted drafts; "
              "E[AL] = 1 + p + p^2 + ... + p^nextn")


def expected_acceptance_length(p: float, nextn: int) -> float:
    """E[AL] = 1 + p + ... + p^nextn under the conditional-probability definition."""
    return float(sum(p ** i for i in range(nextn + 1)))


@dataclass
class SyntheticAcceptance:
    """Draws how many of each request's nextn drafts are accepted; the real verify work still runs."""

    p: float
    nextn: int
    seed: int = 0
    drafts: int = 0  # draft rounds (one per request per step)
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    _gen: torch.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"acceptance probability must be in [0, 1], got {self.p}")
        if self.nextn < 0:
            raise ValueError(f"nextn must be >= 0, got {self.nextn}")
        self._gen = torch.Generator().manual_seed(self.seed)

    def sample(self, num_requests: int) -> torch.Tensor:
        """Accepted draft count per request, in [0, nextn] (LongTensor[num_requests], on CPU)."""
        if self.nextn == 0:
            return torch.zeros(num_requests, dtype=torch.long)
        draws = torch.rand(num_requests, self.nextn, generator=self._gen) < self.p
        # Accepted prefix length: cumulative product stops counting at the first rejection.
        accepted = draws.long().cumprod(dim=1).sum(dim=1)
        self.drafts += num_requests
        self.drafted_tokens += num_requests * self.nextn
        self.accepted_tokens += int(accepted.sum())
        return accepted

    @property
    def target_acceptance_length(self) -> float:
        return expected_acceptance_length(self.p, self.nextn)

    @property
    def acceptance_length(self) -> float:
        """Realised AL = 1 + accepted / drafts (1.0 before any draft)."""
        return 1.0 + self.accepted_tokens / self.drafts if self.drafts else 1.0

    @property
    def acceptance_rate(self) -> float:
        """Realised accepted / drafted tokens."""
        return self.accepted_tokens / self.drafted_tokens if self.drafted_tokens else 0.0
