"""Shared test support: a scripted OpenAI-compatible server and its reply scripts.

Names load on first use, so `python -m tests.support.scripted_server` runs without importing itself twice.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ScriptedServer": "tests.support.scripted_server",
    **{name: "tests.support.scripted_replies" for name in (
        "Reply", "InOrder", "PerRequest", "Received", "echo", "fail_then", "per_request", "request_key",
        "unused_url", "wordish_tokens")},
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tests.support' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
