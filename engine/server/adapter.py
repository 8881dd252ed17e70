"""What the server needs from an engine beyond the Engine interface, found by duck typing.

Any `engine.base.Engine` can be served (chat via `stream()`). An engine may also offer, and the server
then uses:
  tokenizer                 encode(str) -> ids, decode(ids) -> str, render_chat(messages, **template_kwargs) -> str
                            (exact prompt token counts, context-length checks, /v1/completions text prompts)
  max_model_len             context length in tokens
  max_num_seqs              how many requests it batches at once (the server's default running limit)
  stream_prompt(request_id, prompt_token_ids, params, logits_constraint=None) -> AsyncIterator[StreamDelta]
                            raw-prompt generation (/v1/completions, and chat when a constraint is set)
  compile_response_format(kind, schema[, timeout_s]) -> () -> TokenConstraint
                            structured output (engine.constrained); passed to stream_prompt per choice
  cancel_response_format_compile()
                            stop the compile in progress (with timeout_s: the engine enforces the limit)
  ignore_eos_constraint() -> TokenConstraint
                            a constraint that masks end-of-sequence tokens (the `ignore_eos` extension)
  stats() -> dict           keys as in metrics.ENGINE_METRICS (KV blocks, prefix cache, speculative tokens)
  supports_logits_constraints  False when constraints (response_format, ignore_eos) cannot apply,
                            e.g. under speculative decoding
"""
from __future__ import annotations

from typing import Any, AsyncIterator, Callable

from engine.base import ChatRequest, Engine, SamplingParams, StreamDelta


class ServingAdapter:
    """One engine as the server sees it; capabilities are optional and probed once."""

    def __init__(self, engine: Engine, max_model_len: int | None = None) -> None:
        self.engine = engine
        self.tokenizer = _first_attr(engine, ("tokenizer",))
        self.max_model_len = max_model_len or _first_attr(engine, ("max_model_len",))
        self.max_num_seqs = _first_attr(engine, ("max_num_seqs",))
        self._stream_prompt: Callable[..., AsyncIterator[StreamDelta]] | None = getattr(engine, "stream_prompt", None)
        self._stats: Callable[[], dict[str, Any]] | None = getattr(engine, "stats", None)

    @property
    def supports_prompts(self) -> bool:
        return self._stream_prompt is not None and self.tokenizer is not None

    @property
    def _constrainable(self) -> bool:
        return self.supports_prompts and getattr(self.engine, "supports_logits_constraints", True)

    @property
    def supports_constraints(self) -> bool:
        return self._constrainable and hasattr(self.engine, "compile_response_format")

    @property
    def supports_ignore_eos(self) -> bool:
        return self._constrainable and hasattr(self.engine, "ignore_eos_constraint")

    def ignore_eos_constraint(self) -> Callable[[], Any]:
        return self.engine.ignore_eos_constraint

    def compile_response_format(self, kind: str, schema: dict[str, Any] | None,
                                timeout_s: float | None = None) -> Callable[[], Any]:
        """A factory of per-request constraints (see engine.constrained); ValueError for a bad schema.
        Blocking: the server calls it off the event loop."""
        if timeout_s is not None and self.supports_compile_cancel:
            return self.engine.compile_response_format(kind, schema, timeout_s=timeout_s)
        return self.engine.compile_response_format(kind, schema)

    @property
    def supports_compile_cancel(self) -> bool:
        return hasattr(self.engine, "cancel_response_format_compile")

    def cancel_compile(self) -> None:
        """Stop the compile in progress, when the engine can (its client left)."""
        if self.supports_compile_cancel:
            self.engine.cancel_response_format_compile()

    @property
    def supports_images(self) -> bool:
        return bool(getattr(self.engine, "supports_images", False))

    def chat_prompt_ids(self, messages: list[dict[str, Any]],
                        template_kwargs: dict[str, Any] | None = None) -> list[int] | None:
        """The exact token ids the engine will see for a chat, or None when the engine keeps that private.
        template_kwargs (a request's chat_template_kwargs) override the engine's own defaults."""
        if self.tokenizer is None or not hasattr(self.tokenizer, "render_chat"):
            return None
        return list(self.tokenizer.encode(self.tokenizer.render_chat(messages, **(template_kwargs or {}))))

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text))

    def token_text(self, token_id: int) -> str:
        if self.tokenizer is None:
            return ""
        return self.tokenizer.decode([token_id])

    def stream_chat(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        return self.engine.stream(request)

    def stream_prompt(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                      logits_constraint: Any = None) -> AsyncIterator[StreamDelta]:
        assert self._stream_prompt is not None
        if logits_constraint is None:
            return self._stream_prompt(request_id, prompt_token_ids, params)
        return self._stream_prompt(request_id, prompt_token_ids, params, logits_constraint=logits_constraint)

    def stats(self) -> dict[str, Any]:
        if self._stats is None:
            return {}
        try:
            stats = dict(self._stats())
        except Exception:  # a scrape must never fail because the engine is busy or closing
            return {}
        q, h = stats.get("prefix_cache_queries"), stats.get("prefix_cache_hits")
        if "prefix_cache_hit_rate" not in stats and q:
            stats["prefix_cache_hit_rate"] = (h or 0) / q
        return stats


def _first_attr(obj: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return None
