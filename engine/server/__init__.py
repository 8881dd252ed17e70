"""OpenAI-compatible HTTP server over any Engine (the built-in one by default): `python -m harness serve`.

  schemas.py     request bodies (pydantic): shapes and ranges, unknown fields ignored
  errors.py      OpenAI-style error bodies; validation failures become 400s naming the field
  planning.py    a body -> engine requests (one per choice): sampling params, context-length checks
  adapter.py     optional engine capabilities (tokenizer, raw prompts, stats, constraints) by duck typing
  admission.py   fair admission: sequences share running slots between requests; bounded queue, 429 when full
  grammars.py    response_format compiles: depth/size/time limits, one at a time, cancelled on hang-up, cached
  connections.py below the app: header deadline, caps on open connections per client address and in total
  generation.py  runs a plan's choices, records TTFT/TPOT, aborts the engine request when the client leaves
  responses.py   JSON bodies and SSE chunks
  streaming.py   the SSE response: holds the admission ticket, watches for disconnects, ends cleanly at shutdown
  shutdown.py    the drain: after SIGTERM, a grace period, then running work is cut short
  metrics.py     Prometheus text for /metrics
  app.py         the FastAPI app: routes, bearer key, body size cap and read deadline, sequences per request
  launcher.py    blocking `run_server` for the CLI; `serve_in_background` (ephemeral port) for tests and judges
  native.py      the built-in engine as a server engine (raw prompts, KV stats, abort, constrained decoding)
  local.py       `local_openai_server(model)`: the built-in engine on an ephemeral port (scripts, tests)
Structured output lives in engine/constrained (xgrammar).
"""
from __future__ import annotations

from engine.server.app import ServerSettings, create_app
from engine.server.launcher import BackgroundServer, run_server, serve_in_background

__all__ = ["ServerSettings", "create_app", "BackgroundServer", "run_server", "serve_in_background"]
