#!/usr/bin/env bash
# The main job on the embedded default: AIME demo set, built-in engine, SmolLM2-135M on CPU, rules judge.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
bash scripts/setup.sh
. .venv/bin/activate
OUT=${OUT:-runs/aime-demo}
python -m harness generate --task aime --samples "${SAMPLES:-2}" --max-tokens "${MAX_TOKENS:-512}" --out "$OUT" "$@"
python -m harness grade "$OUT" --judge rules
python -m harness summary "$OUT"
echo
echo "demo finished in $((SECONDS - START)) s."
echo "expected: Pass@1 near 0%. SmolLM2-135M is far too small for competition math: measured 0 or 1 of 16 samples"
echo "right on 2026-12-03 (most responses never commit to a final answer). The demo shows the pipeline, not a model."
echo "next: python -m harness report $OUT -o report/   (then open report/index.html)"
