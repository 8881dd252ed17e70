"""The built-in engine as a private OpenAI endpoint for in-process consumers (the LLM judge, sweeps, tests)."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from engine.base import EngineOptions
from engine.server.app import ServerSettings
from engine.server.launcher import serve_in_background


@contextlib.contextmanager
def local_openai_server(model: str = "smollm2-135m", options: EngineOptions | None = None,
                        **settings: Any) -> Iterator[str]:
    """Load the built-in engine, serve it on 127.0.0.1 at an ephemeral port, yield the base URL (…/v1).

    Clients send `model` as given here and any API key. The engine is closed when the block exits."""
    from engine.server.native import ServingNativeEngine
    opts = options or EngineOptions(model=model)
    if opts.model is None:
        opts.model = model
    engine = ServingNativeEngine.from_options(opts)
    settings.setdefault("served_model_name", model)
    with serve_in_background(engine, ServerSettings(**settings), host="127.0.0.1", port=0) as srv:
        yield srv.base_url


@contextlib.contextmanager
def judge_base_urls(judge_engine: str, judge_model: str | None, base_urls: list[str],
                    options: EngineOptions | None = None) -> Iterator[list[str]]:
    """For `grade --judge llm --judge-engine native|openai`: the URLs the LLM judge should call.

    `openai` passes `base_urls` through; `native` starts the built-in engine in-process for the
    duration of the block, so re-grading needs no external server."""
    if judge_engine == "openai":
        yield list(base_urls)
        return
    if judge_engine != "native":
        raise ValueError(f"--judge-engine must be native or openai, got {judge_engine!r}")
    if base_urls:
        raise ValueError("--judge-engine native starts its own server; drop --judge-base-url")
    with local_openai_server(judge_model or "smollm2-135m", options) as url:
        yield [url]
