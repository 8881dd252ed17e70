"""`serve`: an OpenAI-compatible HTTP server over the built-in engine (FastAPI + uvicorn)."""
from __future__ import annotations

import argparse
import ipaddress
import os
import sys

from engine.base import EngineError, EngineOptions
from engine.native.model_registry import DEFAULT_MODEL
from harness.commands.arg_types import non_negative_float, non_negative_int, port_number, positive_float, positive_int
from harness.commands.native_flags import (NATIVE_FLAGS, add_chat_template_argument, add_engine_arguments,
                                           chat_template_kwargs, engine_fields, run_tp_worker)

HELP = "serve the built-in engine over the OpenAI API (/v1/chat/completions, /v1/completions, /metrics)"
EXAMPLES = """\
  python -m harness serve                                   # smollm2-135m on http://127.0.0.1:8000/v1
  python -m harness serve --model smollm2-135m --port 8001 --max-num-seqs 64
  HARNESS_KEY=s3cret python -m harness serve --host 0.0.0.0 --api-key-env HARNESS_KEY
  python -m harness generate --task aime --engine openai --base-url http://127.0.0.1:8000/v1 \\
      --model smollm2-135m --limit 2 --samples 1 --max-tokens 256 --out runs/aime-served
"""


# Front-end limits: (ServerSettings field = flag name, type, default, help). See docs/server.md for each.
SERVER_LIMITS = (
    ("max_waiting", non_negative_int, 512, "bounded waiting queue, in requests; beyond it: 429"),
    ("max_running", positive_int, None, "sequences inside the engine at once (default: --max-num-seqs)"),
    ("max_running_per_request", positive_int, None,
     "running sequences one request may hold; its others wait their turn (default: half of --max-running)"),
    ("max_seqs_per_request", positive_int, 256, "most sequences one request may ask for, prompts x n; beyond: 400"),
    ("body_timeout_s", positive_float, 30.0, "the whole request body must arrive within this many seconds; else 408"),
    ("shutdown_grace_s", non_negative_float, 30.0,
     "on SIGTERM, running requests may finish for this long, then open streams end with an error event"),
    ("header_timeout_s", positive_float, 10.0, "a request's headers (a new connection's first request) must arrive "
                                               "within this many seconds of their first byte; else 408 and close"),
    ("keep_alive_timeout_s", positive_float, 30.0, "idle keep-alive connections are closed after this many seconds"),
    ("max_connections", positive_int, None, "open connections in total; more get 503 and are closed (default 2048, "
                                            "or the open-file limit less 128 when that is lower)"),
    ("max_connections_per_client", positive_int, 256,
     "open connections from one client address; more get 503 and are closed"),
    ("grammar_timeout_s", positive_float, 10.0, "response_format: a schema must compile within this many seconds; else 400"),
    ("max_schema_depth", positive_int, 64, "response_format: deepest nesting of objects/arrays in a schema; beyond: 400"),
    ("max_schema_bytes", positive_int, 128 * 1024, "response_format: largest schema, as compact JSON; beyond: 400"),
    ("grammar_cache_size", non_negative_int, 64, "response_format: compiled grammars kept, by schema hash"),
)


def _add_limits(p: argparse.ArgumentParser) -> None:
    for name, kind, default, text in SERVER_LIMITS:
        shown = "" if default is None else " (default: %(default)s)"
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=default, help=text + shown)
    p.add_argument("--max-body-mb", type=positive_float, default=4.0,
                   help="largest request body accepted, in MiB; beyond it: 400 (default: %(default)s)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"model name or path (default: {DEFAULT_MODEL})")
    p.add_argument("--served-model-name", help="name clients send as `model` (default: --model)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=port_number, default=8000, help="TCP port to listen on (default: %(default)s)")
    p.add_argument("--api-key-env", help="environment variable holding the API key; clients must send it as a bearer token")
    _add_limits(p)
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="server log level (default: %(default)s)")
    add_engine_arguments(p, NATIVE_FLAGS, defaults={"max-num-seqs": (64, "64")})
    add_chat_template_argument(p)
    p.add_argument("--reasoning-parser", choices=("none", "auto", "deepseek-r1", "qwen3"), default="none",
                   help="return a reasoning model's <think> block as reasoning_content, apart from content, in "
                        "chat completions (streamed too), as vLLM does; see docs/reasoning.md (default: none)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def engine_options(args: argparse.Namespace) -> EngineOptions:
    return EngineOptions(model=args.model, chat_template_kwargs=chat_template_kwargs(args) or None,
                         **engine_fields(args))


def run(args: argparse.Namespace) -> int:
    from engine.server import ServerSettings, run_server
    from engine.server.native import ServingNativeEngine

    if (code := run_tp_worker(args)) is not None:  # only rank 0 serves HTTP
        return code
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            raise EngineError(f"--api-key-env {args.api_key_env}: that environment variable is empty or unset")
    if not _is_loopback(args.host) and api_key is None:
        print(f"warning: binding {args.host} without an API key: anyone who can reach this port can use the "
              f"engine; pass --api-key-env VAR", file=sys.stderr)
    engine = ServingNativeEngine.from_options(engine_options(args))
    served = args.served_model_name or args.model
    settings = ServerSettings(served_model_name=served, api_key=api_key,
                              max_body_bytes=int(args.max_body_mb * 1024 * 1024),
                              reasoning_parser=args.reasoning_parser,
                              **{name: getattr(args, name) for name, *_ in SERVER_LIMITS})
    d = engine.describe()

    def announce(url: str) -> None:
        print(f"serving {served} ({d.get('device')}, {d.get('dtype')}, max_model_len {d.get('max_model_len')}, "
              f"max_num_seqs {d.get('max_num_seqs')}) on {url}{' (bearer key required)' if api_key else ''}",
              file=sys.stderr, flush=True)
    run_server(engine, settings, args.host, args.port, log_level=args.log_level, on_listen=announce)
    return 0
