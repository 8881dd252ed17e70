#!/usr/bin/env bash
# The test suite (fast tests; add `-m slow` or `-m ''` for the slow ones).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
python -m pytest -q "$@"
