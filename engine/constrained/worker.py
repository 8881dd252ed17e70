"""Grammar compilation in a child process, so a compile that runs too long, or whose client left, can be stopped.

xgrammar compiles in C++ and cannot be interrupted from Python; a thread that runs it keeps burning CPU after
its request is gone. The child holds the tokenizer's vocabulary index and returns each compiled grammar as
xgrammar's JSON serialization; killing it stops the work at once, and the next compile starts a fresh child.
"""
from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.connection import Connection
from typing import Any


_START_TIMEOUT_S = 300.0


class CompileTimeout(Exception):
    """The compile did not finish within its time limit (the child was stopped)."""


class CompileCancelled(Exception):
    """The compile was cancelled (its client left); the child was stopped."""


def _serve(conn: Connection, tokenizer_info_json: str) -> None:
    """Child process: compile (kind, schema JSON) jobs until the pipe closes."""
    import xgrammar as xgr
    info = xgr.TokenizerInfo.deserialize_json(tokenizer_info_json)
    # xgrammar's own cache is off: the parent caches, with a bound, what it keeps.
    compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
    conn.send(("ready", None))
    while True:
        try:
            schema_json = conn.recv()
        except EOFError:
            return
        try:
            # Compact JSON: with free whitespace a small model can emit blank lines until max_tokens.
            compiled = compiler.compile_json_schema(schema_json, any_whitespace=False)
            conn.send(("ok", compiled.serialize_json()))
        except Exception as exc:  # xgrammar raises RuntimeError/ValueError with its parser's message
            text = str(exc).strip()
            conn.send(("error", text.splitlines()[0] if text else type(exc).__name__))


class CompileWorker:
    """One child process that compiles JSON schemas, one at a time; thread-safe; restarted after a kill."""

    def __init__(self, tokenizer_info: Any) -> None:
        self._info = tokenizer_info
        self._info_json: str | None = None
        self._process: Any = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()  # one compile at a time
        self._killed = False

    def _ensure_started(self) -> Connection:
        if self._process is None or not self._process.is_alive():
            if self._info_json is None:
                self._info_json = self._info.serialize_json()
            # spawn, not fork: the server process runs an engine thread and an event loop.
            ctx = multiprocessing.get_context("spawn")
            parent, child = ctx.Pipe()
            self._process = ctx.Process(target=_serve, args=(child, self._info_json), name="grammar-compiler",
                                        daemon=True)
            self._process.start()
            child.close()
            self._conn = parent
            # Starting (imports, the vocabulary index) takes seconds; it does not count against a compile's limit.
            try:
                if not parent.poll(_START_TIMEOUT_S) or parent.recv()[0] != "ready":
                    raise EOFError
            except (EOFError, OSError):
                self._stop()
                raise RuntimeError("the grammar compiler process did not start") from None
        assert self._conn is not None
        return self._conn

    def compile(self, schema_json: str, timeout_s: float) -> Any:
        """The compiled grammar for `schema_json`; ValueError for a schema xgrammar refuses."""
        import xgrammar as xgr
        with self._lock:
            self._killed = False
            conn = self._ensure_started()
            conn.send(schema_json)
            try:
                ready = conn.poll(timeout_s)
                reply = conn.recv() if ready else None
            except (EOFError, OSError):
                ready, reply = False, None
            if reply is None:
                killed = self._killed
                self._stop()
                if killed:
                    raise CompileCancelled("the grammar compile was cancelled")
                if not ready:
                    raise CompileTimeout(f"the schema did not compile within {timeout_s:g} s")
                raise RuntimeError("the grammar compiler process died")
        status, payload = reply
        if status == "error":
            raise ValueError(payload)
        return xgr.CompiledGrammar.deserialize_json(payload, self._info)

    def kill(self) -> None:
        """Stop the compile in progress (if any); callable from any thread."""
        process = self._process
        if process is not None and process.is_alive():
            self._killed = True
            process.kill()

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(5)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None

    def close(self) -> None:
        self.kill()
        self._stop()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.is_alive() else None
