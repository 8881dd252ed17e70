"""`response_format` grammars under admission: size and depth limits, one compile at a time with a bounded queue
and a time limit, cancelled when the client leaves, and a bounded cache keyed by the schema's hash."""
from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from engine.server.adapter import ServingAdapter
from engine.server.errors import APIError

SCHEMA_PARAM = "response_format.json_schema.schema"


@dataclass
class GrammarLimits:
    """Defaults documented in docs/server.md ("Structured output")."""

    timeout_s: float = 10.0  # compile time limit; beyond it: 400
    max_depth: int = 64  # nesting of objects/arrays in the schema document
    max_bytes: int = 128 * 1024  # the schema as compact JSON
    cache_size: int = 64  # compiled grammars kept, least recently used dropped first
    max_waiting: int = 64  # compiles queued behind the running one; beyond it: 429


def schema_depth(value: Any) -> int:
    """Nesting depth of JSON containers (a scalar is 0, {} is 1); iterative, so a deep document cannot overflow."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


class GrammarCompiles:
    """Compiles response formats for one adapter; touched only from the event loop."""

    def __init__(self, adapter: ServingAdapter, limits: GrammarLimits) -> None:
        self.adapter = adapter
        self.limits = limits
        self._cache: OrderedDict[str, Callable[[], Any]] = OrderedDict()
        self._lock = asyncio.Lock()
        self.compiling = 0
        self.waiting = 0
        self.counts = {"compiled": 0, "cached": 0, "refused": 0, "timeout": 0, "cancelled": 0}

    def _check(self, text: str, schema: Any) -> None:
        lim = self.limits
        depth = schema_depth(schema)
        if depth > lim.max_depth:
            self.counts["refused"] += 1
            raise APIError(400, f"response_format schema nests {depth} levels deep; this server compiles at most "
                                f"{lim.max_depth} (--max-schema-depth)", param=SCHEMA_PARAM)
        if len(text) > lim.max_bytes:
            self.counts["refused"] += 1
            raise APIError(400, f"response_format schema is {len(text)} bytes as compact JSON; this server compiles "
                                f"at most {lim.max_bytes} (--max-schema-bytes)", param=SCHEMA_PARAM)

    async def factory(self, kind: str, schema: Any, disconnected: Callable[[], Awaitable[None]]
                      ) -> Callable[[], Any] | None:
        """The constraint factory for this format, or None when the client left while it compiled or waited."""
        text = json.dumps(schema, separators=(",", ":"), sort_keys=True)
        self._check(text, schema)
        key = hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()
        if key in self._cache:
            self._cache.move_to_end(key)
            self.counts["cached"] += 1
            return self._cache[key]
        if self.waiting >= self.limits.max_waiting:
            raise APIError(429, f"{self.waiting} response_format schemas are waiting to compile; retry later",
                           code="queue_full", headers={"Retry-After": "1"})
        work = asyncio.ensure_future(self._compile(kind, schema))
        watcher = asyncio.ensure_future(disconnected())
        try:
            await asyncio.wait({work, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
        if not work.done():
            work.cancel()  # waiting: leaves the queue; compiling: _compile stops the child process
            await asyncio.gather(work, return_exceptions=True)
            self.counts["cancelled"] += 1
            return None
        made = work.result()
        self._cache[key] = made
        while len(self._cache) > self.limits.cache_size:
            self._cache.popitem(last=False)
        return made

    async def _compile(self, kind: str, schema: Any) -> Callable[[], Any]:
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self.compiling = 1
        try:
            return await self._run(kind, schema)
        finally:
            self.compiling = 0
            self._lock.release()

    async def _run(self, kind: str, schema: Any) -> Callable[[], Any]:
        from engine.constrained.worker import CompileCancelled, CompileTimeout
        limit = self.limits.timeout_s
        job = asyncio.ensure_future(asyncio.to_thread(self.adapter.compile_response_format, kind, schema, limit))
        try:
            if self.adapter.supports_compile_cancel:
                made = await asyncio.shield(job)  # the engine enforces the limit and can be stopped
            else:
                made = await asyncio.wait_for(asyncio.shield(job), limit)  # a thread cannot be stopped: stop waiting
        except asyncio.CancelledError:
            self.adapter.cancel_compile()
            await asyncio.gather(job, return_exceptions=True)  # returns at once once the child is gone
            raise
        except (CompileTimeout, TimeoutError) as exc:
            self.counts["timeout"] += 1
            raise APIError(400, f"response_format schema did not compile within {limit:g} s (--grammar-timeout-s); "
                                f"simplify it", param=SCHEMA_PARAM) from exc
        except CompileCancelled:
            raise asyncio.CancelledError from None
        except ValueError as exc:
            raise APIError(400, f"invalid response_format: {exc}", param=SCHEMA_PARAM) from exc
        except RuntimeError as exc:  # the grammar library is not installed
            raise APIError(400, f"response_format is unavailable on this server: {exc}", param="response_format") from exc
        self.counts["compiled"] += 1
        return made

    def metric_lines(self) -> list[str]:
        lines = ["# HELP harness_grammar_requests_total response_format grammars by outcome.",
                 "# TYPE harness_grammar_requests_total counter"]
        lines += [f'harness_grammar_requests_total{{result="{k}"}} {v}' for k, v in sorted(self.counts.items())]
        lines += ["# HELP harness_grammar_compiling Grammars compiling now.", "# TYPE harness_grammar_compiling gauge",
                  f"harness_grammar_compiling {self.compiling}",
                  "# HELP harness_grammar_waiting Grammars waiting to compile.", "# TYPE harness_grammar_waiting gauge",
                  f"harness_grammar_waiting {self.waiting}",
                  "# HELP harness_grammar_cache_entries Compiled grammars cached.",
                  "# TYPE harness_grammar_cache_entries gauge", f"harness_grammar_cache_entries {len(self._cache)}"]
        return lines

