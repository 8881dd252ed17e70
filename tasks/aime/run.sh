#!/usr/bin/env bash
# AIME: generate 32 samples per problem, then grade with the rules judge.
#   bash tasks/aime/run.sh [--engine openai --base-url URL --model M] [--data data/aime/aime_2026.jsonl]
# Extra arguments go to `generate`. OUT names the run directory.
set -euo pipefail
OUT=${OUT:-runs/aime-$(date +%Y%m%d-%H%M%S)}
python -m harness generate --task aime --out "$OUT" "$@"
python -m harness grade "$OUT" --judge "${JUDGE:-rules}"
python -m harness summary "$OUT"
