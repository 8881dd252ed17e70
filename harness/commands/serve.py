"""`serve`: an OpenAI-compatible HTTP server over the built-in engine (FastAPI + uvicorn)."""
from __future__ import annotations

import argparse
import ipaddress
import os
import sys

from engine.base import EngineError, EngineOptions
from harness.commands.arg_types import non_negative_float, non_negative_int, port_number, positive_float, positive_int
from harness.commands.native_flags import (add_int4_argument, add_nextn_argument, add_parallel_arguments,
                                           native_extra, run_tp_worker)

HELP = "serve the built-in engine over the OpenAI API (/v1/chat/completions, /v1/completions, /metrics)"
EXAMPLES = """\
  python -m harness serve                                   # smollm2-135m on http://127.0.0.1:8000/v1
  python -m harness serve --model smollm2-135m --port 8001 --max-num-seqs 64
  HARNESS_KEY=s3cret python -m harness serve --host 0.0.0.0 --api-key-env HARNESS_KEY
  python -m harness generate --task aime --engine openai --base-url http://127.0.0.1:8000/v1 \\
      --model smollm2-135m --limit 2 --samples 1 --max-tokens 256 --out runs/aime-served
"""

DEFAULT_MODEL = "smollm2-135m"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"model name or path (default: {DEFAULT_MODEL})")
    p.add_argument("--served-model-name", help="name clients send as `model` (default: --model)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=port_number, default=8000, help="TCP port to listen on (default: %(default)s)")
    p.add_argument("--api-key-env", help="environment variable holding the API key; clients must send it as a bearer token")
    p.add_argument("--max-waiting", type=non_negative_int, default=512, help="bounded waiting queue; beyond it requests get 429")
    p.add_argument("--max-running", type=positive_int, help="requests inside the engine at once (default: --max-num-seqs)")
    p.add_argument("--max-running-per-request", type=positive_int,
                   help="running sequences one request may hold at once; its other sequences wait their turn "
                        "(default: half of --max-running)")
    p.add_argument("--max-body-mb", type=positive_float, default=4.0,
                   help="largest request body accepted, in MiB (default 4; beyond it: 400)")
    p.add_argument("--max-seqs-per-request", type=positive_int, default=256,
                   help="most sequences one request may ask for, prompts x n (default 256; beyond it: 400)")
    p.add_argument("--body-timeout-s", type=positive_float, default=30.0,
                   help="the whole request body must arrive within this many seconds (default 30; else 408)")
    p.add_argument("--shutdown-grace-s", type=non_negative_float, default=30.0,
                   help="on SIGTERM, running requests may finish for this long, then open streams end with an "
                        "error event (default 30)")
    p.add_argument("--header-timeout-s", type=positive_float, default=10.0,
                   help="a request's headers must be complete this long after its first byte, and a new connection's "
                        "first request must arrive within it (default 10; else 408 and the connection is closed)")
    p.add_argument("--keep-alive-timeout-s", type=positive_float, default=30.0,
                   help="idle keep-alive connections are closed after this many seconds (default 30)")
    p.add_argument("--max-connections", type=positive_int,
                   help="open connections in total; more are answered 503 and closed (default 2048, or the "
                        "open-file limit less 128 when that is lower)")
    p.add_argument("--max-connections-per-client", type=positive_int, default=256,
                   help="open connections from one client address; more are answered 503 and closed (default 256)")
    p.add_argument("--grammar-timeout-s", type=positive_float, default=10.0,
                   help="response_format: a schema must compile within this many seconds (default 10; else 400)")
    p.add_argument("--max-schema-depth", type=positive_int, default=64,
                   help="response_format: deepest nesting of objects/arrays in a schema (default 64; beyond: 400)")
    p.add_argument("--max-schema-bytes", type=positive_int, default=128 * 1024,
                   help="response_format: largest schema, as compact JSON (default 131072; beyond: 400)")
    p.add_argument("--grammar-cache-size", type=non_negative_int, default=64,
                   help="response_format: compiled grammars kept, by schema hash (default 64)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="server log level (default: %(default)s)")
    p.add_argument("--device", help="cpu|cuda|npu (default: detected)")
    p.add_argument("--dtype", help="bfloat16|float32|float16")
    p.add_argument("--threads", type=positive_int, help="CPU threads for the engine")
    p.add_argument("--kv-cache-gib", type=positive_float, help="KV cache memory budget (default 1)")
    p.add_argument("--max-model-len", type=positive_int, help="context length (default: the model's)")
    p.add_argument("--max-num-seqs", type=positive_int, default=64, help="requests batched per step (default 64)")
    p.add_argument("--max-num-batched-tokens", type=positive_int, help="token budget per step (default 2048)")
    p.add_argument("--block-size", type=positive_int, help="KV cache block size in tokens (default 16)")
    p.add_argument("--no-prefix-caching", action="store_true", help="turn the prefix cache off (default: on)")
    add_int4_argument(p)
    add_nextn_argument(p)
    add_parallel_arguments(p)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def engine_options(args: argparse.Namespace) -> EngineOptions:
    extra = native_extra(args)
    if args.max_num_batched_tokens:
        extra["max_num_batched_tokens"] = args.max_num_batched_tokens
    if args.block_size:
        extra["block_size"] = args.block_size
    if args.no_prefix_caching:
        extra["enable_prefix_caching"] = False
    return EngineOptions(model=args.model, device=args.device, dtype=args.dtype, threads=args.threads,
                         kv_cache_gib=args.kv_cache_gib, max_model_len=args.max_model_len,
                         max_num_seqs=args.max_num_seqs, extra=extra)


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
    settings = ServerSettings(served_model_name=served, api_key=api_key, max_running=args.max_running,
                              max_waiting=args.max_waiting, max_body_bytes=int(args.max_body_mb * 1024 * 1024),
                              max_seqs_per_request=args.max_seqs_per_request, body_timeout_s=args.body_timeout_s,
                              shutdown_grace_s=args.shutdown_grace_s, header_timeout_s=args.header_timeout_s,
                              keep_alive_timeout_s=args.keep_alive_timeout_s, max_connections=args.max_connections,
                              max_connections_per_client=args.max_connections_per_client,
                              max_running_per_request=args.max_running_per_request,
                              grammar_timeout_s=args.grammar_timeout_s, max_schema_depth=args.max_schema_depth,
                              max_schema_bytes=args.max_schema_bytes, grammar_cache_size=args.grammar_cache_size)
    d = engine.describe()

    def announce(url: str) -> None:
        print(f"serving {served} ({d.get('device')}, {d.get('dtype')}, max_model_len {d.get('max_model_len')}, "
              f"max_num_seqs {d.get('max_num_seqs')}) on {url}{' (bearer key required)' if api_key else ''}",
              file=sys.stderr, flush=True)
    run_server(engine, settings, args.host, args.port, log_level=args.log_level, on_listen=announce)
    return 0
