"""The built-in engine as the judge, in-process (no HTTP): a request's response_format becomes the engine's
grammar constraint, as the built-in server applies it, so verdicts keep their JSON schema."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

from engine.base import ChatRequest, Completion, Engine, EngineOptions


def _text_only(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content-part lists flattened to their text (requests with images go to the engine, which refuses them)."""
    return [{**m, "content": "".join(p.get("text", "") for p in m["content"] if p.get("type") == "text")}
            if isinstance(m.get("content"), list) else m for m in messages]


def _rejected(message: str) -> Completion:
    """What a server answers to a response_format it cannot apply: a 400, so the judge asks in plain text."""
    completion = Completion.failed(f"client_error: HTTP 400: {message}")
    completion.extra.update(error_kind="client_error", status=400)
    return completion


class NativeJudgeEngine(Engine):
    """A ServingNativeEngine (engine.server.native) that honours ChatRequest.response_format."""

    name = "native"

    def __init__(self, serving: Any) -> None:
        self.serving = serving
        self._compiled: dict[str, Callable[[], Any]] = {}  # the judge asks with one schema: compile it once
        self._compile_lock = asyncio.Lock()

    @classmethod
    def from_options(cls, options: EngineOptions) -> "NativeJudgeEngine":
        from engine.server.native import ServingNativeEngine  # loads torch: only when asked for

        return cls(ServingNativeEngine.from_options(options))

    async def chat(self, request: ChatRequest) -> Completion:
        fmt = request.response_format
        if fmt is None or request.has_images:
            return await self.serving.chat(request)
        if not self.serving.supports_logits_constraints:
            return _rejected("this engine cannot constrain its output (speculative decoding)")
        try:
            make_constraint = await self._constraint_for(fmt)
        except Exception as exc:  # a schema it cannot compile, a compile timeout, no grammar library
            return _rejected(f"response_format is unavailable here: {type(exc).__name__}: {exc}")
        tokenizer = self.serving.tokenizer
        try:
            prompt_ids = list(tokenizer.encode(tokenizer.render_chat(_text_only(request.messages))))
        except Exception as exc:  # a template that rejects the conversation
            return Completion.failed(f"could not render the chat template: {exc}")
        final = None
        async for delta in self.serving.stream_prompt(request.request_id, prompt_ids, request.params,
                                                      logits_constraint=make_constraint()):
            final = delta.final or final
        return final if final is not None else Completion.failed("stream ended without a result")

    async def _constraint_for(self, fmt: dict[str, Any]) -> Callable[[], Any]:
        """A factory of grammar constraints for `fmt`, compiled off the event loop (it can take seconds)."""
        key = json.dumps(fmt, sort_keys=True)
        async with self._compile_lock:
            if key not in self._compiled:
                schema = (fmt.get("json_schema") or {}).get("schema")
                self._compiled[key] = await asyncio.to_thread(self.serving.compile_response_format,
                                                              fmt.get("type", ""), schema)
        return self._compiled[key]

    async def check_ready(self) -> None:
        await self.serving.check_ready()

    def describe(self) -> dict[str, Any]:
        return self.serving.describe()

    async def aclose(self) -> None:
        await self.serving.aclose()
