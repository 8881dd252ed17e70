"""Scripts for the scripted server: what to answer (Reply) and small handler builders."""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

_WORDISH = re.compile(r"\S+\s*|\s+")


def wordish_tokens(text: str) -> list[str]:
    """Split text into word-ish tokens whose concatenation is the text (the default token count)."""
    return _WORDISH.findall(text)


@dataclass
class Reply:
    """What the server answers to one request; the defaults are a plain, instant success."""

    text: str = "ok"
    status: int = 200                  # 4xx/5xx answer with an OpenAI-style error body
    delay_s: float = 0.0               # before the response starts (timeouts, TTFT)
    token_delay_s: float = 0.0         # streaming: pause between chunks (TPOT)
    chunks: list[str] | None = None    # streaming pieces; default: text's word-ish tokens (text defaults to their join)
    chunk_tokens: list[int] | None = None  # tokens each chunk carries (default 1 each)
    finish_reason: str = "stop"
    prompt_tokens: int | None = None   # default: word-ish tokens of the prompt text
    completion_tokens: int | None = None  # default: sum of chunk tokens
    raw_body: str | None = None        # sent verbatim with `status` (malformed JSON, missing fields)
    drop_connection: bool = False      # abort the socket (after delay_s) without answering
    drop_after: int | None = None      # streaming: abort the socket after this many content chunks
    retry_after: float | None = None   # Retry-After header value in seconds
    error_message: str | None = None   # message of the error body for status >= 400
    headers: dict[str, str] | None = None
    logprobs: list[float] | None = None  # per chunk (whole reply: per word-ish token); default -0.5 each
    json_schema_ok: bool = True        # False: a request with response_format gets 400
    reasoning: str | None = None       # sent as message.reasoning_content (vLLM/DeepSeek style)

    def __post_init__(self) -> None:
        if self.chunks is not None and self.text == "ok":  # so a streamed and a whole reply agree
            self.text = "".join(self.chunks)

    def pieces(self) -> list[str]:
        return list(self.chunks) if self.chunks is not None else wordish_tokens(self.text)

    def piece_tokens(self) -> list[int]:
        pieces = self.pieces()
        tokens = list(self.chunk_tokens) if self.chunk_tokens is not None else [1] * len(pieces)
        if len(tokens) != len(pieces):
            raise ValueError(f"chunk_tokens has {len(tokens)} entries for {len(pieces)} chunks")
        return tokens

    def usage_completion(self) -> int:
        if self.completion_tokens is not None:
            return self.completion_tokens
        return sum(self.piece_tokens()) + len(wordish_tokens(self.reasoning or ""))


Handler = Union[Callable[[dict], Union[Reply, str]], Sequence[Reply], Reply, str, None]


def _constant(reply: Reply) -> Callable[[dict], Reply]:
    return lambda body: reply


def _as_reply(value: Reply | str) -> Reply:
    return Reply(text=value) if isinstance(value, str) else value


def as_handler(handler: Handler) -> Callable[[dict], Reply]:
    """Normalise the accepted handler forms into a function body -> Reply."""
    if handler is None:
        return _constant(Reply())
    if isinstance(handler, (str, Reply)):
        return _constant(_as_reply(handler))
    if isinstance(handler, (list, tuple)):
        return InOrder(handler)
    if callable(handler):
        return lambda body: _as_reply(handler(body))
    raise TypeError(f"unsupported handler {handler!r}")


class InOrder:
    """These replies in arrival order across all requests, then the last one forever."""

    def __init__(self, replies: Sequence[Reply | str | Callable[[dict], Reply | str]]):
        if not replies:
            raise ValueError("InOrder needs at least one reply")
        self.replies = list(replies)
        self._next = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        with self._lock:
            i = min(self._next, len(self.replies) - 1)
            self._next += 1
        item = self.replies[i]
        return _as_reply(item(body) if callable(item) else item)


def request_key(body: dict) -> str:
    """What makes two requests 'the same request': their messages (or prompt) and model."""
    return json.dumps([body.get("model"), body.get("messages", body.get("prompt"))], sort_keys=True)


class PerRequest:
    """For each distinct request (by `key`), its n-th arrival gets replies[n], then the last forever.

    Deterministic under concurrency: every request sees the same script however they interleave.
    """

    def __init__(self, replies: Sequence[Reply | str | Callable[[dict], Reply | str]],
                 key: Callable[[dict], str] = request_key):
        if not replies:
            raise ValueError("PerRequest needs at least one reply")
        self.replies = list(replies)
        self.key = key
        self.arrivals: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Reply:
        k = self.key(body)
        with self._lock:
            n = self.arrivals.get(k, 0)
            self.arrivals[k] = n + 1
        item = self.replies[min(n, len(self.replies) - 1)]
        return _as_reply(item(body) if callable(item) else item)


def per_request(*replies: Reply | str | Callable[[dict], Reply | str]) -> PerRequest:
    return PerRequest(replies)


def fail_then(n: int, status: int = 500, then: Reply | str | Callable[[dict], Reply | str] = Reply(),
              retry_after: float | None = None) -> PerRequest:
    """Each distinct request fails n times with `status`, then gets `then` (e.g. 429 twice, then ok)."""
    failure = Reply(status=status, retry_after=retry_after)
    return PerRequest([failure] * n + [then])


def echo(body: dict) -> Reply:
    """Reply with the text of the last message (or the prompt): handy to tell requests apart."""
    if "messages" in body:
        content = body["messages"][-1].get("content") if body["messages"] else ""
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        return Reply(text=str(content or ""))
    prompt = body.get("prompt", "")
    return Reply(text=prompt if isinstance(prompt, str) else str(prompt))


def unused_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (for server-down tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict | None
    at: float = field(default_factory=time.monotonic)
    query: str = ""  # the raw query string of the request target
