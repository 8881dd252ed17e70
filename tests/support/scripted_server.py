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

from tests.support.scripted_replies import (
    Handler, InOrder, PerRequest, Received, Reply, as_handler, echo, fail_then, per_request, request_key,
    unused_url, wordish_tokens,
)

__all__ = ["ScriptedServer", "Reply", "InOrder", "PerRequest", "Received", "echo", "fail_then",
           "per_request", "request_key", "unused_url", "wordish_tokens"]

_MAX_HEADER_BYTES = 64 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            408: "Request Timeout", 409: "Conflict", 422: "Unprocessable Entity", 429: "Too Many Requests",
            431: "Request Header Fields Too Large", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable", 504: "Gateway Timeout"}
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                429: "rate_limit_error"}


def _error_body(status: int, message: str) -> bytes:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": status}}).encode()


def _prompt_tokens(body: dict) -> int:
    if "messages" in body:
        n = 0
        for m in body.get("messages") or []:
            content = m.get("content") if isinstance(m, dict) else None
            if isinstance(content, str):
                n += len(wordish_tokens(content))
            elif isinstance(content, list):
                n += sum(len(wordish_tokens(p.get("text", ""))) for p in content if isinstance(p, dict))
        return n
    prompt = body.get("prompt", "")
    return sum(len(wordish_tokens(p)) for p in ([prompt] if isinstance(prompt, str) else prompt) if isinstance(p, str))


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection; requests are answered one at a time, in order."""

    def __init__(self, server: "ScriptedServer"):
        self.server = server
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False
        self.closed = False
        self.task: asyncio.Task | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server._conns.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server._conns.discard(self)
        if self.task is not None:
            self.task.cancel()

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.busy:
            self.process()

    def process(self) -> None:
        while not self.busy and not self.closed:
            request = self._take_request()
            if request is None:
                return
            self.server._serve(self, *request)

    def _take_request(self) -> tuple[str, str, dict[str, str], bytes, bool] | None:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buf) > _MAX_HEADER_BYTES:
                self.send(431, _error_body(431, "request headers too large"), keep_alive=False)
            return None
        lines = self.buf[:end].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if len(parts) != 3 or length < 0 or "chunked" in headers.get("transfer-encoding", ""):
            self.send(400, _error_body(400, "unsupported or malformed HTTP request"), keep_alive=False)
            return None
        if len(self.buf) < end + 4 + length:
            return None
        body = bytes(self.buf[end + 4:end + 4 + length])
        del self.buf[:end + 4 + length]
        method, target, version = parts
        connection = headers.get("connection", "").lower()
        keep_alive = (version == "HTTP/1.1" and connection != "close") or connection == "keep-alive"
        return method, target.split("?", 1)[0], headers, body, keep_alive

    def head(self, status: int, content_type: str, keep_alive: bool, length: int | None,
             extra: dict[str, str] | None = None) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"content-type: {content_type}"]
        lines.append(f"content-length: {length}" if length is not None else "transfer-encoding: chunked")
        for name, value in (extra or {}).items():
            lines.append(f"{name}: {value}")
        if not keep_alive:
            lines.append("connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def send(self, status: int, body: bytes, keep_alive: bool = True, content_type: str = "application/json",
             extra: dict[str, str] | None = None) -> None:
        if self.closed or self.transport is None:
            return
        self.transport.write(self.head(status, content_type, keep_alive, len(body), extra) + body)
        if not keep_alive:
            self.closed = True
            self.transport.close()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


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
        self._conns: set[_Connection] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0

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
                loop.create_server(lambda: _Connection(self), self.host, self.port, backlog=4096))
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

    def _serve(self, conn: _Connection, method: str, path: str, headers: dict[str, str], raw: bytes,
               keep_alive: bool) -> None:
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        if self.record:
            with self._lock:
                self._log.append(Received(method, path, headers, body if isinstance(body, dict) else None))
        if path == "/health":  # what vLLM and SGLang answer while they serve, without a key
            return conn.send(200, b"{}", keep_alive)
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return conn.send(401, _error_body(401, "Incorrect API key provided."), keep_alive)
        route = path[3:] if path.startswith("/v1/") else path
        if route == "/models":
            if method != "GET":
                return conn.send(405, _error_body(405, "use GET /v1/models"), keep_alive)
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in self.models]
            return conn.send(200, json.dumps({"object": "list", "data": data}).encode(), keep_alive)
        if route not in ("/chat/completions", "/completions"):
            return conn.send(404, _error_body(404, f"no route {method} {path}"), keep_alive)
        if method != "POST":
            return conn.send(405, _error_body(405, f"use POST {path}"), keep_alive)
        if not isinstance(body, dict):
            return conn.send(400, _error_body(400, "request body is not a JSON object"), keep_alive)
        if body.get("model") not in self.models:
            message = f"The model `{body.get('model')}` does not exist. Served: {', '.join(self.models)}"
            return conn.send(404, _error_body(404, message), keep_alive)
        try:
            reply = self._handler(body)
        except Exception as exc:  # a bug in the test's script: answer 500 and keep it for the test to see
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return conn.send(500, _error_body(500, f"handler failed: {exc}"), keep_alive)
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

    async def _answer_later(self, conn: _Connection, route: str, body: dict, reply: Reply, stream: bool,
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

    def _answer_now(self, conn: _Connection, route: str, body: dict, reply: Reply, stream: bool,
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
            conn.send(reply.status, _error_body(reply.status, reply.error_message or _REASONS.get(
                reply.status, f"HTTP {reply.status}")), keep_alive, extra=extra)
            return True
        fmt = body.get("response_format")
        if not reply.json_schema_ok and isinstance(fmt, dict) and fmt.get("type") not in (None, "text"):
            conn.send(400, _error_body(400, "response_format is not supported by this server"), keep_alive)
            return True
        if not stream:
            conn.send(reply.status, self._full_body(route, body, reply), keep_alive, extra=extra)
            return True
        if defer_stream and (reply.token_delay_s > 0 or reply.drop_after is not None):
            return False
        events = self._events(route, body, reply)
        assert conn.transport is not None
        conn.transport.write(conn.head(200, "text/event-stream", keep_alive, None, extra)
                             + b"".join(_chunk(e) for e in events) + b"0\r\n\r\n")
        if not keep_alive:
            conn.abort()
        return True

    async def _stream_slowly(self, conn: _Connection, route: str, body: dict, reply: Reply,
                             keep_alive: bool) -> None:
        assert conn.transport is not None
        conn.transport.write(conn.head(200, "text/event-stream", keep_alive, None))
        content_sent = 0
        for event, is_content in self._events(route, body, reply, tagged=True):
            if is_content:
                if reply.drop_after is not None and content_sent >= reply.drop_after:
                    conn.abort()
                    return
                if content_sent and reply.token_delay_s > 0:
                    await asyncio.sleep(reply.token_delay_s)
                content_sent += 1
            if conn.closed:
                return
            conn.transport.write(_chunk(event))
        conn.transport.write(b"0\r\n\r\n")
        if not keep_alive:
            conn.abort()

    # -- OpenAI payloads ------------------------------------------------------------------------
    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    def _usage(self, body: dict, reply: Reply, completion: int | None = None) -> dict[str, int]:
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else _prompt_tokens(body)
        done = reply.usage_completion() if completion is None else completion
        return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}

    def _logprobs(self, body: dict, reply: Reply, pieces: list[str]) -> dict | None:
        if not body.get("logprobs"):
            return None
        values = reply.logprobs if reply.logprobs is not None else [-0.5] * len(pieces)
        return {"content": [{"token": p, "logprob": v, "bytes": None, "top_logprobs": []}
                            for p, v in zip(pieces, values)]}

    def _full_body(self, route: str, body: dict, reply: Reply) -> bytes:
        n = int(body.get("n") or 1)
        if route == "/completions":
            choices = [{"index": i, "text": reply.text, "logprobs": None, "finish_reason": reply.finish_reason}
                       for i in range(n)]
            obj, prefix = "text_completion", "cmpl"
        else:
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            if reply.reasoning is not None:
                message["reasoning_content"] = reply.reasoning
            choices = [{"index": i, "message": message, "finish_reason": reply.finish_reason,
                        "logprobs": self._logprobs(body, reply, wordish_tokens(reply.text))} for i in range(n)]
            obj, prefix = "chat.completion", "chatcmpl"
        return json.dumps({"id": self._next_id(prefix), "object": obj, "created": int(time.time()),
                           "model": body.get("model"), "choices": choices,
                           "usage": self._usage(body, reply)}).encode()

    def _events(self, route: str, body: dict, reply: Reply, tagged: bool = False) -> list:
        """The SSE events of a streamed answer; tagged=True pairs each with 'carries content'."""
        chat = route == "/chat/completions"
        cid, created, model = self._next_id("chatcmpl" if chat else "cmpl"), int(time.time()), body.get("model")
        options = body.get("stream_options") or {}
        continuous = bool(options.get("continuous_usage_stats"))
        pieces = [("reasoning_content", p, 1) for p in wordish_tokens(reply.reasoning or "")]
        pieces += [("content", p, t) for p, t in zip(reply.pieces(), reply.piece_tokens())]
        values = reply.logprobs or [-0.5] * len(pieces)

        def event(choice: dict | None, usage: dict | None = None) -> bytes:
            data: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk" if chat else "text_completion",
                                    "created": created, "model": model, "choices": [choice] if choice else []}
            if usage is not None:
                data["usage"] = usage
            return b"data: " + json.dumps(data).encode() + b"\n\n"

        def choice(field: str, text: str, finish: str | None, lp: float | None = None) -> dict:
            logprobs = None
            if lp is not None and body.get("logprobs"):
                logprobs = {"content": [{"token": text, "logprob": lp, "bytes": None, "top_logprobs": []}]}
            if chat:
                return {"index": 0, "delta": {field: text} if field else {}, "logprobs": logprobs,
                        "finish_reason": finish}
            return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}

        out: list[tuple[bytes, bool]] = []
        if chat:
            out.append((event({"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                               "finish_reason": None}), False))
        sent = 0
        for i, (field, piece, tokens) in enumerate(pieces):
            sent += tokens
            usage = self._usage(body, reply, sent) if continuous else None
            out.append((event(choice(field, piece, None, values[i] if i < len(values) else -0.5), usage), True))
        out.append((event(choice("", "", reply.finish_reason)), False))
        if options.get("include_usage"):
            out.append((event(None, self._usage(body, reply)), False))
        out.append((b"data: [DONE]\n\n", False))
        return out if tagged else [e for e, _ in out]


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
