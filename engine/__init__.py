"""Engines: the interface and a registry of backends, imported lazily so each stays optional."""
from __future__ import annotations

import importlib

from engine.base import ChatRequest, Completion, Engine, EngineError, EngineOptions, SamplingParams, StreamDelta

# name -> "module:Class"; adding a backend is one module plus one line here.
ENGINES: dict[str, str] = {
    "native": "engine.native.backend:NativeEngine",
    "openai": "engine.openai.backend:OpenAIEngine",
}


def create_engine(name: str, options: EngineOptions) -> Engine:
    """Build the named engine from CLI options; unknown names list the valid ones."""
    if name not in ENGINES:
        raise EngineError(f"unknown engine {name!r}; valid engines: {', '.join(sorted(ENGINES))}")
    module_name, _, class_name = ENGINES[name].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls.from_options(options)


__all__ = [
    "ChatRequest", "Completion", "Engine", "EngineError", "EngineOptions", "SamplingParams",
    "StreamDelta", "ENGINES", "create_engine",
]
