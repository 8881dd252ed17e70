#!/usr/bin/env bash
# Usage: bash sweep/run_sweep.sh MODE TAG [CONTEXT] [NEXTN] [ACCEPT]
#   MODE: prefill | decode | encoder | serve; TAG: sweep/configs/<TAG>.toml
#   e.g.  bash sweep/run_sweep.sh decode ce-128k 131072 3 0.75
#         bash sweep/run_sweep.sh prefill pe-128k 131072
#         bash sweep/run_sweep.sh encoder ve-800
# Environment: NPROC (ranks; default: the config's [parallel] dp x tp x ep), PROFILE=1 (profiler traces),
#   OUT_DIR (default sweeps), PYTHON (default python), SWEEP_ARGS (extra CLI options, e.g. cost inputs).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
MODE=$1 TAG=$2 CONTEXT=${3:-} NEXTN=${4:-} ACCEPT=${5:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
PYTHON=${PYTHON:-python}
args=(sweep "$MODE" "$TAG" --out-dir "${OUT_DIR:-sweeps}")
[[ -n $CONTEXT ]] && args+=(--context "$CONTEXT")
[[ -n $NEXTN ]] && args+=(--nextn "$NEXTN")
[[ -n $ACCEPT ]] && args+=(--accept "$ACCEPT")
# shellcheck disable=SC2206
[[ -n ${SWEEP_ARGS:-} ]] && args+=($SWEEP_ARGS)
export PROFILE=${PROFILE:-0}
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

# Ranks: NPROC wins; otherwise the config's [parallel] dp x tp x ep (tags are files, or a path to one).
if [[ -z ${NPROC:-} ]]; then
  NPROC=$("$PYTHON" -c 'import sys; from sweep.config import load_config; print(load_config(sys.argv[1]).world_size)' "$TAG")
fi
if [[ $NPROC -gt 1 && $MODE != serve ]]; then
  exec "$PYTHON" -m torch.distributed.run --standalone --nproc-per-node "$NPROC" -m harness "${args[@]}"
fi
exec "$PYTHON" -m harness "${args[@]}"
