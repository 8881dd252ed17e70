"""One request's state inside the engine."""
from __future__ import annotations

import enum
import time

import torch

from engine.base import SamplingParams

# Temperatures below this are treated as greedy: dividing logits by a subnormal temperature overflows to
# inf and the softmax becomes NaN (1e-45 was a real bug); at 1e-5 fp32 logits still give a finite softmax.
GREEDY_TEMPERATURE_FLOOR = 1e-5


def is_greedy(params: SamplingParams) -> bool:
    """True when a request picks the argmax token (temperature 0 or below GREEDY_TEMPERATURE_FLOOR)."""
    return params.temperature < GREEDY_TEMPERATURE_FLOOR


class SeqStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


class Sequence:
    """Prompt + generated token ids, the KV block table, and progress through the KV cache.

    `num_computed_tokens` (tokens whose K/V are in the cache) changes only through advance() and rollback()."""

    def __init__(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams):
        self.request_id = request_id
        self.token_ids: list[int] = list(prompt_token_ids)
        self.num_prompt_tokens = len(prompt_token_ids)
        self.params = params
        self.status = SeqStatus.WAITING
        self.block_table: list[int] = []
        self._num_computed = 0
        self.num_hashed_blocks = 0  # leading full blocks registered in the prefix cache
        self.num_cached_tokens = 0  # prompt tokens served from the prefix cache (last admission)
        self.num_preemptions = 0
        self.logprobs: list[float] | None = [] if params.logprobs else None
        self.finish_reason: str | None = None
        self.error: str | None = None
        self.arrival_time = time.perf_counter()
        self.first_token_time: float | None = None
        self.finish_time: float | None = None
        # Per-request generator: a seeded request draws the same numbers whatever else is batched.
        self.generator: torch.Generator | None = None
        if not is_greedy(params):
            self.generator = torch.Generator()
            if params.seed is not None:
                self.generator.manual_seed(params.seed)
            else:
                self.generator.seed()

    @property
    def num_computed_tokens(self) -> int:
        return self._num_computed

    def advance(self, n: int) -> None:
        """n more tokens have their K/V in the cache."""
        if n < 0:
            raise ValueError(f"cannot advance by {n} tokens")
        self._num_computed += n

    def rollback(self, num_computed: int) -> None:
        """Only the first `num_computed` tokens' K/V count (rejected drafts, preemption, freed blocks)."""
        if not 0 <= num_computed <= self._num_computed:
            raise ValueError(f"cannot roll back from {self._num_computed} to {num_computed} computed tokens")
        self._num_computed = num_computed

    def append_token(self, token: int, logprob: float | None) -> None:
        self.token_ids.append(token)
        if self.first_token_time is None:
            self.first_token_time = time.perf_counter()
        if self.logprobs is not None and logprob is not None:
            self.logprobs.append(logprob)

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens:]

    @property
    def is_finished(self) -> bool:
        return self.status == SeqStatus.FINISHED

    @property
    def is_decoding(self) -> bool:
        """Every token but the newest (sampled, not yet fed back) is in the cache."""
        return self.num_output_tokens > 0 and self._num_computed == len(self.token_ids) - 1
