"""Base URLs and their HTTP clients: least-in-flight load balancing and failover on dead servers.

With the httpx transport each base URL gets several small client pools ("shards") instead of one
large one: httpcore scans every pooled connection on each request, so one pool of 256 connections
costs O(256) per request (~240 requests/s at concurrency 256 on 2 cores; docs/performance.md).
A new shard opens only when every shard has SHARD_TARGET requests in flight, so a light user pays
for one client; the aiohttp transport needs no shards and gets one.
Clients are bound to the event loop that first uses them, so they are rebuilt when the loop changes.
"""
from __future__ import annotations

import asyncio
import base64
import itertools
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

from openai import AsyncOpenAI

from engine.base import EngineError

SHARD_TARGET = 4  # requests in flight per client pool before another pool is opened


@dataclass(frozen=True)
class BaseURL:
    """A base URL split into what may be written anywhere and what must stay in memory.

    Query parameters (e.g. `?api-key=...` of some gateways) are sent on every request and userinfo
    (`user:password@`) as HTTP Basic auth; neither ever appears in `public`, in records or in logs.
    """

    public: str                               # scheme://host[:port]/path: no userinfo, query or fragment
    query: tuple[tuple[str, str], ...] = ()
    username: str | None = None
    password: str | None = None

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for openai.AsyncOpenAI that carry the hidden parts correctly."""
        kwargs: dict[str, Any] = {"base_url": self.public}
        if self.query:
            kwargs["default_query"] = dict(self.query)
        if self.username is not None:
            # Basic auth replaces the bearer key for this URL: one Authorization header per request.
            token = base64.b64encode(f"{self.username}:{self.password or ''}".encode("utf-8")).decode("ascii")
            kwargs["default_headers"] = {"Authorization": f"Basic {token}"}
        return kwargs

    def secrets(self) -> list[str]:
        """Strings to scrub from any text bound for a log or record (raw and decoded forms)."""
        values = [v for _, v in self.query] + [self.password or ""]
        values += [quote(v, safe="") for v in values] + [quote_plus(v) for v in values]
        return [v for v in dict.fromkeys(values) if len(v) >= 3]


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with each secret replaced by ***, longest first (so no secret's tail survives a shorter one)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def split_base_url(url: str) -> BaseURL:
    """Split an http(s) URL into its public part, query parameters and userinfo (path kept as given)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        valid = False
    if not valid:
        raise EngineError(f"base URL {public_url(url)!r} is not an http(s) URL like http://127.0.0.1:8000/v1")
    host = parts.netloc.rsplit("@", 1)[-1]
    public = urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
    username = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return BaseURL(public, tuple(parse_qsl(parts.query, keep_blank_values=True)), username, password)


def normalise_base_url(url: str) -> str:
    """Strip trailing slashes and add /v1 to a bare host URL (what vLLM and SGLang serve).

    The result keeps userinfo and query: it is the endpoint's identity in memory, never written.
    """
    url = url.strip()
    split_base_url(url)  # validates
    parts = urlsplit(url)
    path = parts.path.rstrip("/") or "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def public_url(url: str) -> str:
    """The URL without user:password, query or fragment: safe for logs and records."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # malformed (e.g. an unclosed IPv6 bracket): cut the secrets out by hand
        return re.sub(r"//[^/]*@", "//", url.strip().split("?", 1)[0].split("#", 1)[0])
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path, "", ""))


_URL = re.compile(r"https?://[^\s\"'<>]+")


class RedactURLSecrets(logging.Filter):
    """HTTP libraries log each request's URL whole (httpx at INFO): cut its query and userinfo first."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = _URL.sub(lambda m: public_url(m.group(0)) + ("?<redacted>" if "?" in m.group(0) else ""), message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


_REDACT = RedactURLSecrets()
for _name in ("httpx", "httpx2", "openai._base_client", "aiohttp.client"):
    logging.getLogger(_name).addFilter(_REDACT)


@dataclass
class Shard:
    client: AsyncOpenAI
    in_flight: int = 0
    raw: Any = None  # engine.openai.raw.RawSession for the non-streamed hot path, made on first use


@dataclass
class Endpoint:
    """One base URL: its health and, per event loop, its client shards."""

    url: str
    in_flight: int = 0
    down_until: float = 0.0
    shards: list[Shard] = field(default_factory=list)

    @property
    def name(self) -> str:
        return public_url(self.url)

    def is_up(self, now: float) -> bool:
        return self.down_until <= now


class EndpointPool:
    """Hands out (endpoint, shard) leases; prefers live endpoints with the fewest requests in flight."""

    def __init__(self, urls: list[str], make_client: Callable[[str], AsyncOpenAI], shards: int,
                 down_cooldown_s: float):
        if not urls:
            raise EngineError("the openai engine needs at least one --base-url")
        self.endpoints = [Endpoint(u) for u in dict.fromkeys(urls)]
        self._make_client = make_client
        self._shards = max(1, shards)
        self._cooldown = down_cooldown_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ticket = itertools.count()  # round-robin tie-break so equal loads alternate

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return
        # Clients of a previous (closed) loop cannot be reused or even closed from this one; drop them.
        self._loop = loop
        for ep in self.endpoints:
            ep.shards = []
            ep.in_flight = 0

    def _shard(self, endpoint: Endpoint) -> Shard:
        shard = min(endpoint.shards, key=lambda s: s.in_flight) if endpoint.shards else None
        if shard is None or (shard.in_flight >= SHARD_TARGET and len(endpoint.shards) < self._shards):
            shard = Shard(self._make_client(endpoint.url))
            endpoint.shards.append(shard)
        return shard

    def acquire(self, avoid: set[str] | frozenset[str] = frozenset()) -> tuple[Endpoint, Shard]:
        """Pick an endpoint: live and not in `avoid` first, then the one that comes back soonest."""
        self._bind_loop()
        now = time.monotonic()
        candidates = [e for e in self.endpoints if e.url not in avoid] or self.endpoints
        live = [e for e in candidates if e.is_up(now)]
        if live:
            tick, n = next(self._ticket), len(live)
            endpoint = live[min(range(n), key=lambda i: (live[i].in_flight, (i - tick) % n))]
        else:
            endpoint = min(candidates, key=lambda e: e.down_until)
        shard = self._shard(endpoint)
        endpoint.in_flight += 1
        shard.in_flight += 1
        return endpoint, shard

    def release(self, endpoint: Endpoint, shard: Shard) -> None:
        endpoint.in_flight -= 1
        shard.in_flight -= 1

    def mark_down(self, endpoint: Endpoint) -> None:
        endpoint.down_until = time.monotonic() + self._cooldown

    def mark_up(self, endpoint: Endpoint) -> None:
        endpoint.down_until = 0.0

    def others_up(self, tried: set[str]) -> bool:
        now = time.monotonic()
        return any(e.url not in tried and e.is_up(now) for e in self.endpoints)

    async def aclose(self) -> None:
        if self._loop is not asyncio.get_running_loop():
            return  # bound to another loop (or never used): nothing this loop can close
        for ep in self.endpoints:
            for shard in ep.shards:
                await shard.client.close()
                if shard.raw is not None:
                    await shard.raw.close()
            ep.shards = []
        self._loop = None
