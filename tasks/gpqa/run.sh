#!/usr/bin/env bash
# GPQA Diamond: generate 8 samples per question (options shuffled per sample), then grade with the rules judge.
#   bash tasks/gpqa/run.sh [--engine openai --base-url URL --model M] [--data data/gpqa/gpqa_diamond.csv]
# Extra arguments go to `generate`. OUT names the run directory.
set -euo pipefail
OUT=${OUT:-runs/gpqa-$(date +%Y%m%d-%H%M%S)}
python -m harness generate --task gpqa --out "$OUT" "$@"
python -m harness grade "$OUT" --judge "${JUDGE:-rules}"
python -m harness summary "$OUT"
