"""Building the official AsyncOpenAI clients: SDK retries off, one shared SSL context, a fast transport.

Two HTTP transports, both the SDK's own: aiohttp (`openai.DefaultAioHttpClient`, the `openai[aiohttp]`
extra) when it is installed, else httpx. At concurrency 256 against a server answering at once,
aiohttp needed about half the client CPU per request of httpx on the 2-core development machine
(~1,050 vs ~525 requests per CPU-second, measured side by side), so "auto" prefers it.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Any, Callable

import openai
from openai import AsyncOpenAI

from engine.base import EngineError
from engine.openai.endpoints import split_base_url
from engine.openai.faults import httpx_lib

TRANSPORTS = ("auto", "aiohttp", "httpx")
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
KEEPALIVE_S = 4.0  # below the 5 s after which uvicorn-based servers (vLLM, SGLang) close idle sockets


def aiohttp_available() -> bool:
    try:
        found = importlib.util.find_spec("aiohttp") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as absent
        return False
    return found and hasattr(openai, "DefaultAioHttpClient")


def proxy_configured() -> bool:
    return any(os.environ.get(v) for n in _PROXY_VARS for v in (n, n.lower()))


def resolve_transport(name: str) -> str:
    """'auto' -> 'aiohttp' when installed, else 'httpx'; an unusable explicit choice is an EngineError.

    'auto' keeps httpx when a proxy is set in the environment: the SDK's aiohttp transport ignores it.
    """
    if name not in TRANSPORTS:
        raise EngineError(f"unknown http_transport {name!r}; valid: {', '.join(TRANSPORTS)}")
    if name == "auto":
        return "aiohttp" if aiohttp_available() and not proxy_configured() else "httpx"
    if name == "aiohttp" and not aiohttp_available():
        raise EngineError("http_transport 'aiohttp' needs the aiohttp package: pip install 'openai[aiohttp]'")
    return name


class ClientFactory:
    """Makes one AsyncOpenAI client per call, for a base URL, sharing one SSL context."""

    def __init__(self, api_key: str, timeout_s: float, transport: str, max_connections: int):
        self.api_key = api_key
        self.transport = transport
        self.max_connections = max_connections
        self.timeout = httpx_lib.Timeout(timeout_s, connect=min(timeout_s, 30.0), pool=None)
        self._ssl_context: Any = None

    def __call__(self, url: str) -> AsyncOpenAI:
        if self._ssl_context is None:  # building one costs ~70 ms, so every client shares it
            self._ssl_context = httpx_lib.create_ssl_context()
        n = self.max_connections
        limits = httpx_lib.Limits(max_connections=n, max_keepalive_connections=n, keepalive_expiry=KEEPALIVE_S)
        make: Callable[..., Any] = (openai.DefaultAioHttpClient if self.transport == "aiohttp"
                                    else openai.DefaultAsyncHttpxClient)
        http = make(timeout=self.timeout, verify=self._ssl_context, limits=limits)
        return AsyncOpenAI(api_key=self.api_key, max_retries=0, timeout=self.timeout, http_client=http,
                           **split_base_url(url).client_kwargs())

    def raw_session(self, url: str):
        """The lean aiohttp session for non-streamed chat (engine.openai.raw); None on the httpx transport."""
        if self.transport != "aiohttp":
            return None
        from engine.openai.raw import RawSession
        if self._ssl_context is None:
            self._ssl_context = httpx_lib.create_ssl_context()
        return RawSession(url, self.api_key, self.timeout.read or 600.0, self.max_connections, KEEPALIVE_S,
                          self._ssl_context)
