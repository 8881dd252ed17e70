#!/usr/bin/env bash
# The whole test suite, slow tests included (add `-m 'not slow'` for a quick run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
python -m pytest -q "$@"
