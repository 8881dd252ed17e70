"""The FastAPI app: OpenAI-compatible routes over any Engine, with auth, body limits, admission and metrics."""
from __future__ import annotations

import asyncio
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from engine.base import Engine
from engine.native.model_registry import DEFAULT_MODEL
from engine.server.adapter import ServingAdapter
from engine.server.admission import Admission
from engine.server.connections import ConnectionLimits, ConnectionTracker, default_max_connections
from engine.server.errors import APIError, error_body, install_error_handlers
from engine.server.generation import Runtime, collect
from engine.server.grammars import GrammarCompiles, GrammarLimits
from engine.server.metrics import ServerMetrics
from engine.server.planning import check_model, check_width, plan_chat, plan_completion
from engine.server.responses import engine_failure, full_response, sse_stream
from engine.server.schemas import ChatCompletionRequest, CompletionRequest
from engine.server.shutdown import Drain
from engine.server.streaming import SHUTDOWN_MESSAGE, EventStreamResponse, wait_disconnect


@dataclass
class ServerSettings:
    """Front-end limits; None means "ask the engine" (running limit) or "no key" (auth)."""

    served_model_name: str = DEFAULT_MODEL
    api_key: str | None = None
    max_running: int | None = None
    max_waiting: int = 512
    retry_after_s: float = 1.0
    max_body_bytes: int = 4 * 1024 * 1024
    max_model_len: int | None = None
    aliases: tuple[str, ...] = ()
    max_running_per_request: int | None = None  # running sequences one request may hold; None: half of max_running
    max_seqs_per_request: int = 256  # prompts x n: one request may not ask for more sequences than this
    body_timeout_s: float = 30.0  # the whole request body must arrive within this (408 otherwise)
    shutdown_grace_s: float = 5.0  # running requests may finish for this long after SIGTERM (CLI default: 30)
    header_timeout_s: float = 10.0  # a request's headers must be complete this long after its first byte (408)
    keep_alive_timeout_s: float = 30.0  # idle keep-alive connections are closed after this long
    max_connections: int | None = None  # open connections in total; None: 2048, or less under a low open-file limit
    max_connections_per_client: int = 256  # open connections from one client address

    grammar_timeout_s: float = 10.0  # response_format compile time limit (400 beyond)
    max_schema_depth: int = 64  # response_format schema nesting limit (400 beyond)
    max_schema_bytes: int = 128 * 1024  # response_format schema size limit, as compact JSON (400 beyond)
    grammar_cache_size: int = 64  # compiled grammars kept by schema hash

    def grammar_limits(self) -> GrammarLimits:
        return GrammarLimits(self.grammar_timeout_s, self.max_schema_depth, self.max_schema_bytes,
                             self.grammar_cache_size, self.max_waiting)

    def connection_limits(self) -> ConnectionLimits:
        total = self.max_connections if self.max_connections is not None else default_max_connections()
        return ConnectionLimits(self.header_timeout_s, self.keep_alive_timeout_s, total, self.max_connections_per_client)
    reasoning_parser: str = "none"  # engine.reasoning.PARSERS: chat replies carry reasoning_content apart (vLLM's)


class GuardMiddleware:
    """Pure ASGI (no buffering of streamed responses): bearer-key check on /v1, then the request body is read
    here, whole, under a size cap and a deadline, and replayed to the app."""

    def __init__(self, app: Any, settings: ServerSettings, metrics: ServerMetrics, drain: Drain) -> None:
        self.app, self.settings, self.metrics, self.drain = app, settings, metrics, drain

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.settings.api_key and scope["path"].startswith("/v1"):
            auth = headers.get("authorization", "")
            token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
            if not hmac.compare_digest(token.encode(), self.settings.api_key.encode()):
                self.metrics.rejected(401)
                msg = "missing API key: send 'Authorization: Bearer KEY'" if not token else "invalid API key"
                return await _send_error(send, 401, msg, None, {"www-authenticate": "Bearer"})
        limit = self.settings.max_body_bytes
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            self.metrics.rejected(400)
            return await _send_error(send, 400, f"request body is {length} bytes; the limit is {limit}", "body")
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        # A slow or stalled body must not hold a connection (or, later, a slot) forever: read it all here.
        timeout = self.settings.body_timeout_s
        parts, seen, more = [], 0, True
        try:
            async with self.drain.bounded(timeout):
                while more:
                    message = await receive()
                    if message["type"] != "http.request":
                        return  # the client left while sending
                    parts.append(message.get("body", b""))
                    seen += len(parts[-1])
                    more = message.get("more_body", False)
                    if seen > limit:
                        self.metrics.rejected(400)
                        return await _send_error(send, 400, f"request body exceeds the limit of {limit} bytes", "body")
        except TimeoutError:
            # "connection: close": the rest of the body may still arrive, so this connection cannot be reused.
            close = {"connection": "close"}
            if self.drain.expired:
                return await _send_error(send, 503, "the server is shutting down", "body", close)
            self.metrics.rejected(408)
            return await _send_error(send, 408, f"the request body did not arrive within {timeout:g} s "
                                                f"({seen} bytes received)", "body", close)
        replay = [{"type": "http.request", "body": b"".join(parts), "more_body": False}]

        async def replay_receive() -> dict:
            return replay.pop() if replay else await receive()
        return await self.app(scope, replay_receive, send)


async def _send_error(send: Any, status: int, message: str, param: str | None, extra: dict | None = None) -> None:
    body = json.dumps(error_body(status, message, param)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _run_unless_disconnected(request: Request, drain: Drain, coro: Any) -> Any:
    """Await the work, but cancel it (and so abort the engine request) if the client goes away;
    a 503 when the shutdown grace period ends first."""
    async def bounded() -> Any:
        async with drain.bounded():
            return await coro
    work = asyncio.ensure_future(bounded())
    watcher = asyncio.ensure_future(wait_disconnect(request.receive))
    try:
        await asyncio.wait({work, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()  # the handler itself is being cancelled: the work must not outlive its admission slots
        raise
    finally:
        watcher.cancel()
    if not work.done():
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        return None
    if isinstance(work.exception(), TimeoutError) and drain.expired:
        raise APIError(503, SHUTDOWN_MESSAGE, code="server_shutting_down")
    return work.result()


def create_app(engine: Engine, settings: ServerSettings | None = None, close_engine: bool = False) -> FastAPI:
    """Build the app; `close_engine` hands the engine's lifetime to the app (closed at shutdown)."""
    settings = settings or ServerSettings()
    adapter = ServingAdapter(engine, settings.max_model_len)
    metrics = ServerMetrics()
    max_running = settings.max_running or adapter.max_num_seqs or 256
    admission = Admission(max_running, settings.max_waiting, settings.retry_after_s, settings.max_running_per_request)
    served = {settings.served_model_name, *settings.aliases}
    rt = Runtime(adapter, admission, metrics, served, reasoning_parser=settings.reasoning_parser)
    grammars = GrammarCompiles(adapter, settings.grammar_limits())
    drain = Drain()
    connections = ConnectionTracker(settings.connection_limits())  # enforced by the launcher's protocol class
    created = int(time.time())

    async def lifespan(_: FastAPI):
        yield
        if close_engine:
            await engine.aclose()

    app = FastAPI(title="harness OpenAI-compatible server", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.runtime = rt
    app.state.drain = drain  # the launcher begins it when uvicorn starts shutting down
    app.state.settings = settings
    app.state.connections = connections
    install_error_handlers(app, on_reject=metrics.rejected)
    app.add_middleware(GuardMiddleware, settings=settings, metrics=metrics, drain=drain)

    async def _serve(request: Request, plan: Any) -> Response:
        if drain.draining:
            raise APIError(503, "the server is shutting down", code="server_shutting_down")
        ticket = admission.enter(len(plan.choices))  # slots or a queue place now, or a 429: before any byte is sent
        if plan.stream:
            return EventStreamResponse(sse_stream(rt, plan, ticket), ticket, drain,
                                       headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        try:
            completions = await _run_unless_disconnected(request, drain, collect(rt, plan, ticket))
        finally:
            ticket.release()
        if completions is None:
            return Response(status_code=499)  # nobody is listening; the status is for logs only
        failure = engine_failure(completions)
        if failure is not None:
            raise APIError(500, failure, code="engine_error")
        return JSONResponse(full_response(rt, plan, completions))

    async def _plan(planner: Any, body: Any, request: Request) -> Any:
        check_model(body.model, served)
        check_width(body, settings.max_seqs_per_request)
        fmt = body.response_format
        compiled = None
        if fmt is not None and fmt.type != "text" and adapter.supports_constraints:
            # Limits, a queue, a time limit and a cache; compiled off the event loop and stopped if the client leaves.
            schema = fmt.json_schema.schema_ if fmt.json_schema else None
            compiled = await grammars.factory(fmt.type, schema, lambda: wait_disconnect(request.receive))
            if compiled is None:
                return None
        return planner(body, adapter, body.model, compiled)

    async def _plan_and_serve(planner: Any, request: Request, body: Any) -> Response:
        plan = await _plan(planner, body, request)
        if plan is None:
            return Response(status_code=499)  # the client left while its grammar compiled
        return await _serve(request, plan)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request, body: ChatCompletionRequest) -> Response:
        return await _plan_and_serve(plan_chat, request, body)

    @app.post("/v1/completions")
    async def completions(request: Request, body: CompletionRequest) -> Response:
        return await _plan_and_serve(plan_completion, request, body)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        card = {"object": "model", "created": created, "owned_by": "harness"}
        if adapter.max_model_len:
            card["max_model_len"] = adapter.max_model_len
        return {"object": "list", "data": [{"id": name, **card} for name in sorted(served)]}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "running": admission.running, "waiting": admission.waiting,
                "compiling": grammars.compiling, "compile_waiting": grammars.waiting}

    @app.get("/metrics")
    async def prometheus() -> PlainTextResponse:
        text = metrics.render(admission.running, admission.waiting, adapter.stats(), connections)
        text += "\n".join(grammars.metric_lines()) + "\n"
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
