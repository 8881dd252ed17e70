"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It speaks enough of the chat/completions protocol (JSON and SSE streaming) for the official `openai`
client, answers from a handler you script (see scripted_replies), and injects faults: error statuses,
delays, malformed bodies, dropped connections. It is a small asyncio protocol rather than an ASGI app:
no per-request framework cost, and a reply can abort the socket, which ASGI cannot express.

    with ScriptedServer(fail_then(2, 429)) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="x")
"""
from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from typing import Any, Sequence

from tests.support.scripted_http import REASONS, Connection, chunk, error_body
from tests.support.scripted_payloads import full_body, stream_events
from tests.support.scripted_replies import (
    Handler, InOrder, PerRequest, Received, Reply, as_handler, echo, fail_then, per_request, request_key,
    unused_url, wordish_tokens,
)

__all__ = ["ScriptedServer", "Reply", "InOrder", "PerRequest", "Received", "echo", "fail_then",
           "per_request", "request_key", "unused_url", "wordish_tokens"]


class ScriptedServer:
    """A real HTTP server in a background thread; use as a context manager or start()/stop()."""

    def __init__(self, handler: Handler = None, model: str | Sequence[str] = "test-model",
                 api_key: str | None = None, host: str = "127.0.0.1", port: int = 0, record: bool = True):
        self._handler = as_handler(handler)
        self.record = record  # False: keep no request log (long benchmark runs)
        self.models = [model] if isinstance(model, str) else list(model)
        self.api_key = api_key
        self.host = host
        self.port = port
        self.errors: list[str] = []  # handler exceptions, answered as 500 so tests can spot script bugs
        self.in_flight = 0
        self.max_in_flight = 0
        self._log: list[Received] = []
        self._lock = threading.Lock()
        self._conns: set[Connection] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- public surface -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[dict]:
        """Bodies of the POST requests received, in arrival order (a snapshot)."""
        with self._lock:
            return [r.body for r in self._log if r.method == "POST" and r.body is not None]

    @property
    def log(self) -> list[Received]:
        """Every request received (method, path, headers, body), in arrival order (a snapshot)."""
        with self._lock:
            return list(self._log)

    def set_handler(self, handler: Handler) -> None:
        """Replace the script; takes effect for the next request."""
        self._handler = as_handler(handler)

    def reset(self) -> None:
        """Forget the requests and errors seen so far."""
        with self._lock:
            self._log.clear()
            self.errors.clear()
            self.max_in_flight = self.in_flight

    def start(self) -> "ScriptedServer":
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(ready, failure), name="scripted-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]
        return self

    def stop(self) -> None:
        """Close the listener and every connection, then end the thread."""
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._shutdown)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- event loop thread ----------------------------------------------------------------------
    def _run(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            self._server = loop.run_until_complete(
                loop.create_server(lambda: Connection(self), self.host, self.port, backlog=4096))
        except BaseException as exc:  # e.g. port in use: re-raised by start() in the caller's thread
            failure.append(exc)
            loop.close()
            ready.set()
            return
        self.port = self._server.sockets[0].getsockname()[1]
        ready.set()
        try:
            loop.run_forever()
            loop.run_until_complete(asyncio.sleep(0))  # deliver connection_lost, which cancels tasks
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        finally:
            loop.close()

    def _shutdown(self) -> None:
        self._server.close()
        for conn in list(self._conns):
            conn.abort()
        assert self._loop is not None
        self._loop.stop()

    def _serve(self, conn: Connection, method: str, path: str, headers: dict[str, str], raw: bytes,
               keep_alive: bool) -> None:
        path, _, query = path.partition("?")
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        if self.record:
            with self._lock:
                self._log.append(Received(method, path, headers, body if isinstance(body, dict) else None,
                                          query=query))
        if path == "/health":  # what vLLM and SGLang answer while they serve, without a key
            return conn.send(200, b"{}", keep_alive)
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return conn.send(401, error_body(401, "Incorrect API key provided."), keep_alive)
        route = path[3:] if path.startswith("/v1/") else path
        if route == "/models":
            if method != "GET":
                return conn.send(405, error_body(405, "use GET /v1/models"), keep_alive)
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in self.models]
            return conn.send(200, json.dumps({"object": "list", "data": data}).encode(), keep_alive)
        if route not in ("/chat/completions", "/completions"):
            return conn.send(404, error_body(404, f"no route {method} {path}"), keep_alive)
        if method != "POST":
            return conn.send(405, error_body(405, f"use POST {path}"), keep_alive)
        if not isinstance(body, dict):
            return conn.send(400, error_body(400, "request body is not a JSON object"), keep_alive)
        if body.get("model") not in self.models:
            message = f"The model `{body.get('model')}` does not exist. Served: {', '.join(self.models)}"
            return conn.send(404, error_body(404, message), keep_alive)
        try:
            reply = self._handler(body)
        except Exception as exc:  # a bug in the test's script: answer 500 and keep it for the test to see
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return conn.send(500, error_body(500, f"handler failed: {exc}"), keep_alive)
        stream = bool(body.get("stream"))
        if reply.delay_s > 0 or (stream and (reply.token_delay_s > 0 or reply.drop_after is not None)):
            conn.busy = True
            conn.task = asyncio.get_running_loop().create_task(
                self._answer_later(conn, route, body, reply, stream, keep_alive))
            return None
        self._enter()
        try:
            self._answer_now(conn, route, body, reply, stream, keep_alive)
        finally:
            self._leave()
        return None

    def _enter(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        self.in_flight -= 1

    async def _answer_later(self, conn: Connection, route: str, body: dict, reply: Reply, stream: bool,
                            keep_alive: bool) -> None:
        self._enter()
        try:
            await asyncio.sleep(reply.delay_s)
            if not self._answer_now(conn, route, body, reply, stream, keep_alive, defer_stream=True):
                await self._stream_slowly(conn, route, body, reply, keep_alive)
        finally:
            self._leave()
            conn.busy = False
            conn.task = None
            if not conn.closed and conn.buf:
                asyncio.get_running_loop().call_soon(conn.process)

    def _answer_now(self, conn: Connection, route: str, body: dict, reply: Reply, stream: bool,
                    keep_alive: bool, defer_stream: bool = False) -> bool:
        """Answer at once; returns False when a paced stream is left for the caller to send."""
        if reply.drop_connection:
            conn.abort()
            return True
        extra = dict(reply.headers or {})
        if reply.retry_after is not None:
            extra["retry-after"] = f"{reply.retry_after:g}"
        if reply.raw_body is not None:
            kind = "text/event-stream" if stream and reply.status == 200 else "application/json"
            conn.send(reply.status, reply.raw_body.encode(), keep_alive, kind, extra)
            return True
        if reply.status >= 400:
            conn.send(reply.status, error_body(reply.status, reply.error_message or REASONS.get(
                reply.status, f"HTTP {reply.status}")), keep_alive, extra=extra)
            return True
        fmt = body.get("response_format")
        if not reply.json_schema_ok and isinstance(fmt, dict) and fmt.get("type") not in (None, "text"):
            conn.send(400, error_body(400, "response_format is not supported by this server"), keep_alive)
            return True
        if not stream:
            conn.send(reply.status, full_body(route, body, reply), keep_alive, extra=extra)
            return True
        if defer_stream and (reply.token_delay_s > 0 or reply.drop_after is not None):
            return False
        events = [event for event, _ in stream_events(route, body, reply)]
        assert conn.transport is not None
        conn.transport.write(conn.head(200, "text/event-stream", keep_alive, None, extra)
                             + b"".join(chunk(e) for e in events) + b"0\r\n\r\n")
        if not keep_alive:
            conn.close()
        return True

    async def _stream_slowly(self, conn: Connection, route: str, body: dict, reply: Reply,
                             keep_alive: bool) -> None:
        assert conn.transport is not None
        conn.transport.write(conn.head(200, "text/event-stream", keep_alive, None, reply.headers))
        content_sent = 0
        for event, is_content in stream_events(route, body, reply):
            if is_content:
                if reply.drop_after is not None and content_sent >= reply.drop_after:
                    conn.abort()
                    return
                if content_sent and reply.token_delay_s > 0:
                    await asyncio.sleep(reply.token_delay_s)
                content_sent += 1
            if conn.closed:
                return
            conn.transport.write(chunk(event))
        conn.transport.write(b"0\r\n\r\n")
        if not keep_alive:
            conn.close()


def main(argv: list[str] | None = None) -> None:
    """Serve a fixed reply until interrupted: `python -m tests.support.scripted_server --port 8000`."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--model", default="test-model")
    ap.add_argument("--text", default="The answer is \\boxed{42}. Answer: A")
    ap.add_argument("--echo", action="store_true", help="reply with the last message's text")
    args = ap.parse_args(argv)
    server = ScriptedServer(echo if args.echo else Reply(text=args.text), model=args.model, port=args.port,
                            record=False)
    server.start()
    print(f"serving {args.model!r} at {server.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
