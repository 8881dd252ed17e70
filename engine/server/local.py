"""The built-in engine as a private OpenAI endpoint for in-process consumers (sweeps, scripts, tests)."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from engine.base import EngineOptions
from engine.native.model_registry import DEFAULT_MODEL
from engine.server.app import ServerSettings
from engine.server.launcher import serve_in_background


@contextlib.contextmanager
def local_openai_server(model: str = DEFAULT_MODEL, options: EngineOptions | None = None,
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

