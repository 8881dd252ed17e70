"""`serve`: an OpenAI-compatible HTTP server over the built-in engine (FastAPI + uvicorn)."""
from __future__ import annotations

import argparse
import ipaddress
import os
import sys

from engine.base import EngineError, EngineOptions
from harness.commands.native_flags import (add_chat_template_argument, add_int4_argument, add_nextn_argument,
                                           add_parallel_arguments, chat_template_kwargs, native_extra, run_tp_worker)

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
    p.add_argument("--port", type=int, default=8000, help="TCP port to listen on (default: %(default)s)")
    p.add_argument("--api-key-env", help="environment variable holding the API key; clients must send it as a bearer token")
    p.add_argument("--max-waiting", type=int, default=512, help="bounded waiting queue; beyond it requests get 429")
    p.add_argument("--max-running", type=int, help="requests inside the engine at once (default: --max-num-seqs)")
    p.add_argument("--max-body-mb", type=float, default=4.0, help="largest request body accepted")
    p.add_argument("--max-seqs-per-request", type=int, default=256,
                   help="most sequences one request may ask for, prompts x n (default 256; beyond it: 400)")
    p.add_argument("--body-timeout-s", type=float, default=30.0,
                   help="the whole request body must arrive within this many seconds (default 30; else 408)")
    p.add_argument("--shutdown-grace-s", type=float, default=30.0,
                   help="on SIGTERM, running requests may finish for this long, then open streams end with an "
                        "error event (default 30)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="server log level (default: %(default)s)")
    p.add_argument("--device", help="cpu|cuda|npu (default: detected)")
    p.add_argument("--dtype", help="bfloat16|float32|float16")
    p.add_argument("--threads", type=int, help="CPU threads for the engine")
    p.add_argument("--kv-cache-gib", type=float, help="KV cache memory budget (default 1)")
    p.add_argument("--max-model-len", type=int, help="context length (default: the model's)")
    p.add_argument("--max-num-seqs", type=int, default=64, help="requests batched per step (default 64)")
    p.add_argument("--max-num-batched-tokens", type=int, help="token budget per step (default 2048)")
    p.add_argument("--block-size", type=int, help="KV cache block size in tokens (default 16)")
    p.add_argument("--no-prefix-caching", action="store_true", help="turn the prefix cache off (default: on)")
    add_int4_argument(p)
    add_nextn_argument(p)
    add_parallel_arguments(p)
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
    extra = native_extra(args)
    if args.max_num_batched_tokens:
        extra["max_num_batched_tokens"] = args.max_num_batched_tokens
    if args.block_size:
        extra["block_size"] = args.block_size
    if args.no_prefix_caching:
        extra["enable_prefix_caching"] = False
    if template_kwargs := chat_template_kwargs(args):
        extra["chat_template_kwargs"] = template_kwargs
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
    if args.max_waiting < 0 or (args.max_running is not None and args.max_running < 1):
        raise ValueError("--max-waiting must be >= 0 and --max-running >= 1")
    if args.max_seqs_per_request < 1:
        raise ValueError(f"--max-seqs-per-request must be >= 1, got {args.max_seqs_per_request}")
    if not args.body_timeout_s > 0 or not args.shutdown_grace_s >= 0:
        raise ValueError("--body-timeout-s must be > 0 and --shutdown-grace-s >= 0")
    engine = ServingNativeEngine.from_options(engine_options(args))
    served = args.served_model_name or args.model
    settings = ServerSettings(served_model_name=served, api_key=api_key, max_running=args.max_running,
                              max_waiting=args.max_waiting, max_body_bytes=int(args.max_body_mb * 1024 * 1024),
                              max_seqs_per_request=args.max_seqs_per_request, body_timeout_s=args.body_timeout_s,
                              shutdown_grace_s=args.shutdown_grace_s,
                              reasoning_parser=getattr(args, "reasoning_parser", "none"))
    d = engine.describe()

    def announce(url: str) -> None:
        print(f"serving {served} ({d.get('device')}, {d.get('dtype')}, max_model_len {d.get('max_model_len')}, "
              f"max_num_seqs {d.get('max_num_seqs')}) on {url}{' (bearer key required)' if api_key else ''}",
              file=sys.stderr, flush=True)
    run_server(engine, settings, args.host, args.port, log_level=args.log_level, on_listen=announce)
    return 0
