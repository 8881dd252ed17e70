"""The built-in engine as the server needs it: raw token prompts, KV/prefix stats, constrained decoding.

A thin subclass of engine.native.backend.NativeEngine; it reuses that class's engine thread, inbox and
per-request sinks, and hooks structured output in as a per-request logits processor: LLMEngine.step()
masks a constrained request's logits row before it samples from it.
"""
from __future__ import annotations

from typing import Any, AsyncIterator, Callable

import torch

from engine.base import EngineOptions, SamplingParams, StreamDelta
from engine.native.backend import NativeEngine
from engine.native.llm_engine import LLMEngine, LogitsProcessor


def constraint_processor(constraint: Any) -> LogitsProcessor:
    """A TokenConstraint as an LLMEngine logits processor: catch up on the tokens sampled since the last step
    (the matcher lags by one), then mask the row in place."""
    def process(output_token_ids: list[int], logits: torch.Tensor) -> None:
        constraint.sync(output_token_ids)
        constraint.mask_logits(logits)
    return process


class EOSMask:
    """A TokenConstraint that only forbids end-of-sequence tokens (requests with ignore_eos)."""

    def __init__(self, eos_ids: list[int]) -> None:
        self.eos_ids = eos_ids

    def sync(self, output_token_ids: list[int]) -> None:
        pass

    def mask_logits(self, logits: Any) -> None:
        logits[self.eos_ids] = float("-inf")

    def accept_token(self, token_id: int) -> bool:
        return token_id not in self.eos_ids

    def is_terminated(self) -> bool:
        return False

    def rollback(self, num_tokens: int) -> None:
        pass


class ServingNativeEngine(NativeEngine):
    """NativeEngine plus stream_prompt / stats / compile_response_format (see engine.server.adapter)."""

    def __init__(self, engine: LLMEngine) -> None:
        super().__init__(engine)
        self.tokenizer = engine.tokenizer
        self.max_model_len = engine.config.max_model_len
        self.max_num_seqs = engine.config.max_num_seqs
        self.aborted = 0
        # Speculative steps verify drafts against raw logits, so constraints (structured output, ignore_eos)
        # cannot apply; the server answers such requests with a 400.
        self.supports_logits_constraints = not getattr(engine, "nextn", 0)

    @classmethod
    def from_options(cls, options: EngineOptions) -> "ServingNativeEngine":
        return super().from_options(options)  # type: ignore[return-value]

    def compile_response_format(self, kind: str, schema: dict[str, Any] | None,
                                timeout_s: float = 30.0) -> Callable[[], Any]:
        from engine.constrained import compile_response_format
        return compile_response_format(self.tokenizer, kind, schema, vocab_size=self.engine.model_config.vocab_size,
                                       stop_ids=sorted(self.engine.eos_ids), timeout_s=timeout_s)

    def cancel_response_format_compile(self) -> None:
        from engine.constrained import cancel_compile
        cancel_compile(self.tokenizer)

    async def aclose(self) -> None:
        from engine.constrained.grammar import close_compiler
        close_compiler(self.tokenizer)
        await super().aclose()

    def ignore_eos_constraint(self) -> "EOSMask":
        return EOSMask(sorted(self.engine.eos_ids))

    async def stream_prompt(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                            logits_constraint: Any = None) -> AsyncIterator[StreamDelta]:
        processor = constraint_processor(logits_constraint) if logits_constraint is not None else None
        async for delta in super().stream_prompt(request_id, prompt_token_ids, params, logits_processor=processor):
            yield delta

    def _apply(self, cmd: tuple) -> None:
        # Count aborts that really stopped a request (NativeEngine.stream sends them too).
        if cmd[0] == "abort":
            self.aborted += bool(self.engine.abort(cmd[1]))
            return
        super()._apply(cmd)

    def stats(self) -> dict[str, Any]:
        eng = self.engine
        st = eng.stats()
        out: dict[str, Any] = {
            "requests_running": st["requests_running"], "requests_waiting": st["requests_waiting"],
            "kv_blocks_total": st["num_blocks"], "kv_blocks_free": st["blocks_free"],
            "kv_blocks_used": st["blocks_used"], "kv_block_size": st["block_size"],
            "prefix_cache_queries": st["prefix_cache_queries"], "prefix_cache_hits": st["prefix_cache_hits"],
            "prefix_cache_hit_rate": st["prefix_cache_hit_rate"], "preemptions": st["preemptions"],
            "aborted_requests": self.aborted,
        }
        spec = getattr(eng, "spec_stats", None)  # present once speculative decoding is wired into LLMEngine
        if spec is not None:
            out["spec_drafted_tokens"] = spec.num_draft_tokens
            out["spec_accepted_tokens"] = spec.num_accepted_tokens
        return out
