#!/usr/bin/env bash
# HLE: generate one sample per question, then grade with the LLM judge.
#   JUDGE_MODEL=M JUDGE_BASE_URL=URL bash tasks/hle/run.sh --engine openai --base-url URL --model M \
#       [--data data/hle/] [--subset all|text|image] [--hle-prompt official|harness]
# Extra arguments go to `generate`. OUT names the run directory; the judge's API key is read from the
# variable named by JUDGE_API_KEY_ENV (default OPENAI_API_KEY), never from the command line.
set -euo pipefail
: "${JUDGE_MODEL:?set JUDGE_MODEL to the judge model name}"
: "${JUDGE_BASE_URL:?set JUDGE_BASE_URL to the judge server, e.g. http://127.0.0.1:8001/v1}"
OUT=${OUT:-runs/hle-$(date +%Y%m%d-%H%M%S)}
python -m harness generate --task hle --out "$OUT" "$@"
python -m harness grade "$OUT" --judge llm --judge-model "$JUDGE_MODEL" --judge-base-url "$JUDGE_BASE_URL" \
    --judge-api-key-env "${JUDGE_API_KEY_ENV:-OPENAI_API_KEY}"
python -m harness summary "$OUT"
