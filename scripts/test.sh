#!/usr/bin/env bash
# Runs the linter, the layer contracts, the type checker and the whole test suite in ./.venv (created and
# installed if needed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/env.sh" dev
cd "$ROOT"
ruff check src tests benchmarks
lint-imports --no-cache          # the layers of docs/architecture.md ([tool.importlinter] in pyproject.toml)
mypy                             # [tool.mypy]: strict on graph/, store/, llm/, retrieval/
# The real-model tests' server shares the cores with pytest itself: llama.cpp's threads spin-wait, so two
# of them on a 2-core machine starve the client (tests/realmodel.py; a user's own server uses every core).
export THINKGRAPH_LLAMA_THREADS="${THINKGRAPH_LLAMA_THREADS:-1}"
python -m pytest "$@"
