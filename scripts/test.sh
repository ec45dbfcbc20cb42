#!/usr/bin/env bash
# Runs the linter and the whole test suite in ./.venv (created and installed if needed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/env.sh" dev
cd "$ROOT"
ruff check src tests benchmarks
python -m pytest "$@"
