"""Start the server: blocking for the CLI, or in a background thread on an ephemeral port (tests, judge)."""
from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any, Callable, Iterator, Union

import uvicorn

from engine.base import Engine, EngineError
from engine.server.app import ServerSettings, create_app
from engine.server.connections import guarded_protocol, protocol_class


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise EngineError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.listen(2048)
    sock.setblocking(False)
    return sock


# After the grace period, open requests end themselves within milliseconds; uvicorn cancels (and logs)
# only what is still running this much later.
_SHUTDOWN_BACKSTOP_S = 5.0


class _GracefulServer(uvicorn.Server):
    """uvicorn's server, plus: shutdown begins the app's drain, and a requested shutdown exits with status 0."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.drain = config.app.state.drain
        self.grace_s = config.app.state.settings.shutdown_grace_s

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn stops accepting and waits for open connections; the drain ends them after the grace period.
        self.drain.begin(self.grace_s)
        await super().shutdown(sockets)

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        # uvicorn re-raises a caught SIGTERM/SIGINT after shutting down, so the process dies by the signal;
        # the shutdown went as asked, so exit normally instead.
        getattr(self, "_captured_signals", []).clear()


def _server(app: Any, log_level: str, http: str = "auto") -> _GracefulServer:
    # "auto" takes httptools and uvloop when installed (less CPU per streamed token), else h11 and
    # asyncio. Access logs cost CPU on every request, so they are off.
    # The protocol class adds what uvicorn lacks: a header deadline and caps on open connections.
    settings, tracker = app.state.settings, app.state.connections
    protocol = guarded_protocol(protocol_class(http), tracker)
    return _GracefulServer(uvicorn.Config(app, log_level=log_level, access_log=False, http=protocol, loop="auto",
                                          lifespan="on", timeout_keep_alive=tracker.limits.keep_alive_timeout_s,
                                          timeout_graceful_shutdown=settings.shutdown_grace_s + _SHUTDOWN_BACKSTOP_S))


def run_server(engine: Engine, settings: ServerSettings, host: str = "127.0.0.1", port: int = 8000,
               log_level: str = "info", on_listen: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted (Ctrl-C / SIGTERM); the engine is closed on the way out.

    `on_listen` gets the base URL once the socket is bound (port 0 picks a free port)."""
    sock = _bind(host, port)
    if on_listen is not None:
        bound_host, bound_port = sock.getsockname()[:2]
        on_listen(f"http://{f'[{bound_host}]' if ':' in bound_host else bound_host}:{bound_port}/v1")
    _server(create_app(engine, settings, close_engine=True), log_level).run(sockets=[sock])


class BackgroundServer:
    """A running server in a daemon thread; `base_url` ends in /v1, as OpenAI clients expect."""

    def __init__(self, engine: Engine, settings: ServerSettings, host: str = "127.0.0.1", port: int = 0,
                 close_engine: bool = True, log_level: str = "warning", http: str = "auto") -> None:
        self.engine = engine
        self.settings = settings
        self._sock = _bind(host, port)
        self.host, self.port = self._sock.getsockname()[:2]
        self.app = create_app(engine, settings, close_engine=close_engine)
        self._server = _server(self.app, log_level, http)
        self._thread = threading.Thread(target=self._run, name=f"server-{self.port}", daemon=True)
        self._error: BaseException | None = None

    @property
    def root_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
        except BaseException as exc:  # noqa: BLE001 - surfaced by start()
            self._error = exc

    def start(self, timeout_s: float = 30.0) -> "BackgroundServer":
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if self._error is not None or not self._thread.is_alive():
                raise EngineError(f"the server failed to start: {self._error!r}")
            if time.monotonic() > deadline:
                raise EngineError(f"the server did not start within {timeout_s:.0f} s")
            time.sleep(0.01)
        return self

    def stop(self, timeout_s: float | None = None) -> None:
        """Shut down as on SIGTERM (open requests get the grace period); wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout_s if timeout_s is not None else self.settings.shutdown_grace_s + 30)
        self._sock.close()


@contextlib.contextmanager
def serve_in_background(engine: Union[Engine, Callable[[], Engine]], settings: ServerSettings | None = None,
                        host: str = "127.0.0.1", port: int = 0, close_engine: bool = True) -> Iterator[BackgroundServer]:
    """`with serve_in_background(engine) as srv: OpenAI(base_url=srv.base_url, api_key=...)`."""
    if callable(engine) and not isinstance(engine, Engine):
        engine = engine()
    server = BackgroundServer(engine, settings or ServerSettings(), host, port, close_engine).start()
    try:
        yield server
    finally:
        server.stop()
