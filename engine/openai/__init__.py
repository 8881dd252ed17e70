"""The `openai` engine: any OpenAI-compatible server (vLLM, SGLang, TensorRT-LLM, the built-in server).

Modules (import the one you need; this package imports none of them, so reading params costs no SDK load):
  backend.py     OpenAIEngine: the retry policy, failover, streaming and non-streamed requests
  clients.py     building the official AsyncOpenAI clients and choosing the HTTP transport
  endpoints.py   base URLs (secrets scrubbed), their client pools, least-in-flight balancing
  faults.py      what went wrong with a request, whether to retry it, how long to wait
  params.py      request parameters that follow the model (reasoning models' token and sampling rules)
  raw.py         the non-streamed hot path: one aiohttp POST without the SDK's request machinery
  replies.py     reading chat-completion replies, whole or streamed

Inside this package `import openai` is the PyPI SDK: imports are absolute, so the package's own name
does not shadow it.
"""
