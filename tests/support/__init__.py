"""Shared test support: a scripted OpenAI-compatible server and its reply scripts."""
from tests.support.scripted_replies import (
    InOrder, PerRequest, Received, Reply, echo, fail_then, per_request, request_key, unused_url, wordish_tokens,
)
from tests.support.scripted_server import ScriptedServer

__all__ = ["ScriptedServer", "Reply", "InOrder", "PerRequest", "Received", "echo", "fail_then",
           "per_request", "request_key", "unused_url", "wordish_tokens"]
