#!/usr/bin/env bash
# The main job on the embedded default: AIME demo set, built-in engine, SmolLM2-135M on CPU, rules judge.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
OUT=${OUT:-runs/aime-demo}
python -m harness generate --task aime --samples "${SAMPLES:-2}" --max-tokens "${MAX_TOKENS:-512}" --out "$OUT" "$@"
python -m harness grade "$OUT" --judge rules
python -m harness summary "$OUT"
