"""What went wrong with one OpenAI-compatible request, whether to retry it, and how long to wait."""
from __future__ import annotations

import email.utils
import json
import random
import sys
import time
from dataclasses import dataclass
from typing import Any, Mapping

import openai

try:  # openai>=3 is built on httpx2; older releases on httpx
    import httpx2 as httpx_lib
except ImportError:  # pragma: no cover - depends on the installed openai
    import httpx as httpx_lib  # type: ignore[no-redef]

# 408/409 are transient by the HTTP spec and the OpenAI SDK's own policy; other 4xx will fail again.
RETRYABLE_4XX = frozenset({408, 409, 429})

_STOP = frozenset({"stop", "eos", "stop_sequence", "end_turn", "tool_calls", "function_call", "content_filter"})
_LENGTH = frozenset({"length", "max_tokens", "model_length", "max_output_tokens"})
_ABORTED = frozenset({"abort", "error", "cancelled"})


class MalformedReply(Exception):
    """A reply that arrived but cannot be read as an OpenAI completion (not JSON, no choices...)."""


class ServerReportedError(Exception):
    """A reply that is well-formed but says the server failed (an error object, finish_reason 'abort')."""


@dataclass
class Fault:
    """One failed attempt, classified."""

    kind: str  # rate_limited | server_error | client_error | timeout | connection | malformed | internal
    message: str
    status: int | None = None
    retryable: bool = True
    retry_after_s: float | None = None
    unreachable: bool = False  # no connection could be made: the server is down, not just this request

    def describe(self) -> str:
        status = f"HTTP {self.status}: " if self.status is not None else ""
        return f"{self.kind}: {status}{self.message}"


def normalise_finish_reason(raw: Any) -> str:
    """Map a server's finish_reason to 'stop' or 'length'; aborted generations raise."""
    if raw in _LENGTH:
        return "length"
    if raw in _ABORTED:
        raise ServerReportedError(f"the server ended the generation with finish_reason {raw!r}")
    return "stop"  # stop-like, None, or a vendor-specific reason (kept raw by the caller)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from retry-after-ms, Retry-After seconds or an HTTP date; None when absent."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        parsed = email.utils.parsedate_tz(value)
        if parsed is not None:
            return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def backoff_delay(retry: int, base_s: float, cap_s: float, retry_after_s: float | None = None) -> float:
    """Exponential backoff with full jitter; a server's Retry-After wins but is capped."""
    if retry_after_s is not None:
        return min(retry_after_s, cap_s)
    return random.uniform(0.0, min(cap_s, base_s * 2 ** max(retry - 1, 0)))


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    text = ""
    try:
        text = exc.response.text
    except Exception:  # a streamed body that was never read
        pass
    return text[:300] or exc.response.reason_phrase or "no message"


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    if cause is None or not str(cause):
        return str(exc) or type(exc).__name__
    return f"{type(cause).__name__}: {cause}"


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen and len(seen) < 8:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return seen


def _aiohttp_fault(exc: BaseException) -> Fault | None:
    """Classify by the original aiohttp error: the SDK's aiohttp transport maps every connection
    error, a server that hung up included, to httpx's ConnectTimeout, which would read as 'down'."""
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is None:  # never imported, so none of its errors can be here
        return None
    for e in _chain(exc):
        if isinstance(e, aiohttp.ConnectionTimeoutError):
            return Fault("connection", "no connection within the connect timeout", unreachable=True)
        if isinstance(e, aiohttp.ServerTimeoutError):
            return Fault("timeout", "no reply within the request timeout")
        if isinstance(e, aiohttp.ClientConnectorError):
            return Fault("connection", f"{type(e).__name__}: {e}", unreachable=True)
        if isinstance(e, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)):
            return Fault("connection", f"{type(e).__name__}: {e}")
    return None


def classify(exc: BaseException) -> Fault:
    """Turn an exception from one attempt into a Fault; unknown exceptions are not retried."""
    from_aiohttp = _aiohttp_fault(exc)
    if from_aiohttp is not None:
        return from_aiohttp
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, httpx_lib.ConnectTimeout) or isinstance(cause, httpx_lib.ConnectTimeout):
        return Fault("connection", "no connection within the connect timeout", unreachable=True)
    if isinstance(exc, openai.APITimeoutError) or isinstance(exc, httpx_lib.TimeoutException):
        return Fault("timeout", "no reply within the request timeout")
    if isinstance(exc, openai.APIConnectionError):
        return Fault("connection", _cause(exc), unreachable=isinstance(cause, httpx_lib.ConnectError))
    if isinstance(exc, httpx_lib.TransportError):  # raised directly while a stream is being read
        return Fault("connection", f"{type(exc).__name__}: {exc}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _server_message(exc)
        if status == 429:
            return Fault("rate_limited", message, status, True, parse_retry_after(exc.response.headers))
        if status >= 500:
            return Fault("server_error", message, status, True, parse_retry_after(exc.response.headers))
        return Fault("client_error", message, status, status in RETRYABLE_4XX, parse_retry_after(exc.response.headers))
    if isinstance(exc, (MalformedReply, json.JSONDecodeError, openai.APIResponseValidationError)):
        return Fault("malformed", str(exc) or type(exc).__name__)
    if isinstance(exc, ServerReportedError):
        return Fault("server_error", str(exc))
    if isinstance(exc, openai.APIError):  # e.g. an error event inside a stream
        return Fault("server_error", str(exc))
    return Fault("internal", f"{type(exc).__name__}: {exc}", retryable=False)
