"""The built-in engine as the server needs it: raw token prompts, KV/prefix stats, constrained decoding.

A thin subclass of engine.native.backend.NativeEngine; it reuses that class's engine thread, inbox and
per-request sinks, and hooks structured output in by wrapping the model runner: the runner's logits
for a constrained request are masked before LLMEngine.step() samples from them.
"""
from __future__ import annotations

from typing import Any, AsyncIterator, Callable

import torch

from engine.base import EngineOptions, SamplingParams, StreamDelta
from engine.native.backend import NativeEngine
from engine.native.llm_engine import LLMEngine


class ConstrainedRunner:
    """Wraps ModelRunner.run: masks each constrained request's logits row, in place, before sampling."""

    def __init__(self, inner: Any, constraints: dict[str, Any]) -> None:
        self.inner = inner
        self.constraints = constraints  # engine request id -> TokenConstraint

    def run(self, seqs: list, counts: list[int]) -> tuple[Any, list[int]]:
        logits, rows = self.inner.run(seqs, counts)
        if logits is None or not self.constraints:
            return logits, rows
        # The runner may hand back inference tensors, which only accept in-place writes in inference mode.
        with torch.inference_mode(logits.is_inference()):
            for seq, r in zip(seqs, rows):
                c = self.constraints.get(seq.request_id) if r >= 0 else None
                if c is not None:
                    c.sync(seq.output_token_ids)  # tokens sampled since the last step (the matcher lags by one)
                    c.mask_logits(logits[r])
        return logits, rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


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
        self._constraints: dict[str, Any] = {}
        self._pending_constraint: Any = None
        engine.runner = ConstrainedRunner(engine.runner, self._constraints)

    @classmethod
    def from_options(cls, options: EngineOptions) -> "ServingNativeEngine":
        return super().from_options(options)  # type: ignore[return-value]

    def compile_response_format(self, kind: str, schema: dict[str, Any] | None) -> Callable[[], Any]:
        from engine.constrained import compile_response_format
        return compile_response_format(self.tokenizer, kind, schema, vocab_size=self.engine.model_config.vocab_size,
                                       stop_ids=sorted(self.engine.eos_ids))

    def ignore_eos_constraint(self) -> "EOSMask":
        return EOSMask(sorted(self.engine.eos_ids))

    async def stream_prompt(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                            logits_constraint: Any = None) -> AsyncIterator[StreamDelta]:
        self._pending_constraint = logits_constraint
        try:
            async for delta in super().stream_prompt(request_id, prompt_token_ids, params):
                yield delta
        finally:
            self._pending_constraint = None  # unused when the engine refused the request up front

    def _on_submit(self, rid: str) -> None:
        # runs synchronously inside super().stream_prompt before the request reaches the engine thread
        constraint, self._pending_constraint = self._pending_constraint, None
        if constraint is not None:
            self._constraints[rid] = constraint

    def _on_release(self, rid: str) -> None:
        self._constraints.pop(rid, None)

    def _apply(self, cmd: tuple) -> None:
        # Count aborts that really stopped a request (NativeEngine.stream sends them too).
        if cmd[0] == "abort":
            self.aborted += bool(self.engine.abort(cmd[1]))
            return
        super()._apply(cmd)

    def stats(self) -> dict[str, Any]:
        eng = self.engine
        bm, sched = eng.block_manager, eng.scheduler
        free = bm.num_free
        out: dict[str, Any] = {
            "requests_running": len(sched.running), "requests_waiting": len(sched.waiting),
            "kv_blocks_total": bm.num_blocks, "kv_blocks_free": free, "kv_blocks_used": bm.num_blocks - free,
            "kv_block_size": bm.block_size, "prefix_cache_queries": bm.queries, "prefix_cache_hits": bm.hits,
            "prefix_cache_hit_rate": bm.hits / bm.queries if bm.queries else 0.0,
            "preemptions": sched.total_preemptions, "aborted_requests": self.aborted,
        }
        spec = getattr(eng, "spec_stats", None)  # present once speculative decoding is wired into LLMEngine
        if spec is not None:
            out["spec_drafted_tokens"] = spec.num_draft_tokens
            out["spec_accepted_tokens"] = spec.num_accepted_tokens
        return out
