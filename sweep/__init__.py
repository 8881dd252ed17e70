"""Performance sweeps: prefill, decode and encoder Pareto sweeps on the built-in engine, and a
serving sweep against any OpenAI-compatible endpoint.

One module per concept: config (tags in configs/<tag>.toml), records (results.jsonl, resume),
provenance, cost, timing (steps, medians, profiler), ranks (torchrun), acceptance (synthetic
speculative acceptance), plot (Pareto charts, --compare), runner (the point loop), orchestrate (one
sweep from a tag: overrides, eval, SLA search, on this process's ranks), and one module per sweep kind:
prefill, decode, encoder, serve.
"""
