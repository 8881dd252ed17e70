"""Prefill sweep: points are tokens per prefill step (the engine's per-step token budget).

Each measured round prefills whole prompts of `context` tokens (max(1, B // context) of them), so the
timed steps walk every offset of the context, as a long-context prefill does.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.base import SamplingParams
from sweep.config import SweepConfig
from sweep.devices import check_device, gpus_note
from sweep.engine_session import PromptMaker, build_engine, describe, drain
from sweep.runner import Measurement, Outcome
from sweep.timing import maybe_profile, median, timed

DEFINITIONS = {
    "latency_ms": "median wall time of one engine step (prefill only), device-synchronised (ms)",
    "input_tokens_per_s_per_gpu": ("non-cached prompt tokens computed in the measured steps / their total time, "
                                   "per device (whole rounds, so every context offset counts)"),
    "cached_tokens": ("prompt tokens served from the prefix cache during measured steps (not in the rate; "
                      "engine.cached_prefix sets a shared prefix, else prompts are distinct)"),
    "context_prefill_s": "time to prefill one whole prompt of `context` tokens (sum of its steps)",
    "input_tput_per_gpu": "= input_tokens_per_s_per_gpu, under InferenceX's name",
}


class PrefillSweep:
    kind = "prefill"

    def __init__(self, cfg: SweepConfig, device: str) -> None:
        if not cfg.context:
            raise ValueError(f"{cfg.path}: prefill needs a context length (config 'context' or --context)")
        self.cfg, self.device = cfg, check_device(device)
        self.engine = None
        # Tokens at the start of every prompt that the prefix cache already holds (0: none).
        self.cached_prefix = int(cfg.engine.get("cached_prefix", 0))
        if not 0 <= self.cached_prefix < cfg.context:
            raise ValueError(f"{cfg.path}: engine.cached_prefix must be in [0, context), got {self.cached_prefix}")
        self._prefix: list[int] = []

    def points(self) -> list[dict[str, Any]]:
        return [{"batch_tokens": b, "context": self.cfg.context} for b in self.cfg.points]

    def setup(self) -> None:
        budget = max(self.cfg.points)
        self.engine = build_engine(self.cfg, self.device, max_num_batched_tokens=budget)
        if self.cfg.context >= self.engine.config.max_model_len:
            raise ValueError(f"context {self.cfg.context} must be below the model's length {self.engine.config.max_model_len}")
        self.prompts = PromptMaker(self.engine.model_config.vocab_size, self.cfg.seed)
        if self.cached_prefix:
            if not self.engine.config.enable_prefix_caching:
                raise ValueError(f"{self.cfg.path}: engine.cached_prefix needs enable_prefix_caching = true")
            self._prefix = self.prompts.tokens(self.cached_prefix)

    def describe(self) -> dict[str, Any]:
        return {**describe(self.engine), "cached_prefix": self.cached_prefix} if self.engine else {}

    def _round(self, batch_tokens: int, prompt_len: int) -> list[tuple[float, int, int]]:
        """Prefill whole prompts with `batch_tokens` per step; (seconds, computed, cached) per step."""
        self.engine.config.max_num_batched_tokens = batch_tokens
        n = max(1, batch_tokens // prompt_len)
        for _ in range(n):  # max_tokens=1: each request ends with its prefill step
            prefix = self._prefix[:prompt_len - 1]
            prompt = prefix + self.prompts.tokens(prompt_len - len(prefix))
            self.engine.add_request(prompt, SamplingParams(max_tokens=1))
        steps = []
        while self.engine.has_unfinished():
            elapsed, out = timed(self.engine.step, self.device)
            st = out.stats
            errors = [o.error for o in out.outputs if o.finish_reason == "error"]
            if errors:
                raise MemoryError(f"KV cache out of memory: {errors[0]}") if "KV cache" in errors[0] else RuntimeError(errors[0])
            if st.num_prefill_tokens or st.num_cached_tokens:
                steps.append((elapsed, st.num_prefill_tokens, st.num_cached_tokens))
        return steps

    def measure(self, point: dict[str, Any], trace_path: Path | None) -> Measurement:
        b, ctx = point["batch_tokens"], point["context"]
        warm = min(ctx, b * max(1, self.cfg.warmup_steps))
        if self.cached_prefix:  # put the shared prefix in the cache, untimed
            warm = max(warm, self.cached_prefix + 1)
        if self.cfg.warmup_steps or self.cached_prefix:
            try:
                self._round(b, warm)
            finally:
                drain(self.engine)
        steps: list[tuple[float, int, int]] = []
        rounds = 0
        try:
            with maybe_profile(trace_path):
                while len(steps) < self.cfg.measured_steps:  # whole rounds: every offset of the context
                    steps += self._round(b, ctx)
                    rounds += 1
        finally:
            drain(self.engine)  # a failed point must not leave requests behind for the next one
        # The last step of a round may be short; rates use each step's own token count.
        times = [s[0] for s in steps]
        return Measurement(times, work={"tokens": sum(s[1] for s in steps) / len(steps)},
                           info={"step_tokens": [s[1] for s in steps], "cached": sum(s[2] for s in steps),
                                 "rounds": rounds, "requests_per_round": max(1, b // ctx),
                                 "tokens_per_s_steps": [s[1] / s[0] for s in steps]})

    def summarise(self, point, step_times_s, work, infos, gpus) -> Outcome:
        info = infos[0]
        lat = median(step_times_s)
        tok_per_step = work["tokens"] / len(infos)  # mean computed tokens per step per engine (dp rank)
        # every engine's tokens over the devices they ran on (dp ranks, or the tp/ep ranks of one engine)
        per_gpu = work["tokens"] / gpus * len(step_times_s) / sum(step_times_s)
        metrics = {
            "latency_ms": lat * 1e3,
            "latency_ms_mean": sum(step_times_s) / len(step_times_s) * 1e3,
            "input_tokens_per_s_per_gpu": per_gpu,
            "input_tokens_per_s": per_gpu * gpus,
            "input_tput_per_gpu": per_gpu,  # InferenceX's name for the same number
            "tokens_per_step": tok_per_step,
            "cached_tokens": sum(i["cached"] for i in infos),
            "context_prefill_s": sum(step_times_s) / (info["rounds"] * info["requests_per_round"]),
            "measured_steps": len(step_times_s),
            "rounds": info["rounds"],
            "step_times_ms": [t * 1e3 for t in step_times_s],
        }
        return Outcome(metrics, DEFINITIONS, {"gpus": gpus, "gpus_note": gpus_note(self.device, gpus)},
                       cost_rates={"input_tokens": per_gpu})

    def close(self) -> None:
        """Idempotent; a tensor/expert-parallel engine releases its worker ranks here."""
        if self.engine is not None:
            self.engine.close()
        self.engine = None
