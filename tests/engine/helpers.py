"""Building the openai engine the way the CLI does, with retry delays small enough for tests."""
from __future__ import annotations

import asyncio
from typing import Any

from engine import ChatRequest, Completion, EngineOptions, SamplingParams, StreamDelta, create_engine
from engine.openai.backend import OpenAIEngine


HTTP_TRANSPORT = "auto"  # set per test by the http_transport fixture in tests/engine/conftest.py


def make_engine(*base_urls: str, model: str = "test-model", max_retries: int = 2, timeout_s: float = 5.0,
                api_key_env: str = "OPENAI_API_KEY", **tuning: Any) -> OpenAIEngine:
    tuning.setdefault("http_transport", HTTP_TRANSPORT)
    options = EngineOptions(model=model, base_urls=list(base_urls), api_key_env=api_key_env,
                            request_timeout_s=timeout_s, max_retries=max_retries, retry_base_delay_s=0.01,
                            **tuning)
    engine = create_engine("openai", options)
    assert isinstance(engine, OpenAIEngine)
    return engine


def request(text: str = "What is 6 x 7?", **params: Any) -> ChatRequest:
    return ChatRequest(request_id="r", messages=[{"role": "user", "content": text}],
                       params=SamplingParams(**params))


def chat_once(engine: OpenAIEngine, req: ChatRequest | None = None) -> Completion:
    """One request in a fresh event loop, closing the engine's clients afterwards."""
    async def go() -> Completion:
        try:
            return await engine.chat(req or request())
        finally:
            await engine.aclose()
    return asyncio.run(go())


def chat_all(engine: OpenAIEngine, texts: list[str]) -> list[Completion]:
    """One concurrent request per text in a fresh event loop, closing the engine's clients afterwards."""
    async def go() -> list[Completion]:
        try:
            return list(await asyncio.gather(*(engine.chat(request(t)) for t in texts)))
        finally:
            await engine.aclose()
    return asyncio.run(go())


def stream_once(engine: OpenAIEngine, req: ChatRequest | None = None) -> list[StreamDelta]:
    async def go() -> list[StreamDelta]:
        try:
            return [d async for d in engine.stream(req or request())]
        finally:
            await engine.aclose()
    return asyncio.run(go())
