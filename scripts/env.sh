#!/usr/bin/env bash
# Creates ./.venv if needed and installs thinkgraph into it (again only when pyproject.toml changed).
# Sourced by demo.sh and test.sh. Needs Python >= 3.11 and access to the package registry.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
EXTRAS="${1:-}"

pick_python() {
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "thinkgraph needs Python 3.11 or newer on PATH" >&2; return 1
}

if [ ! -x "$VENV/bin/python" ]; then
  "$(pick_python)" -m venv "$VENV"
fi
PY="$VENV/bin/python"
STAMP="$VENV/.thinkgraph-install"
HASH="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)"
WANT="$HASH-${EXTRAS}"
# Installed already when the stamp has this pyproject.toml and every extra asked for (dev holds them all):
# demo.sh, test.sh and local_model.sh ask for different extras and must not reinstall each other's.
installed() {
  local have; have="$(cat "$STAMP" 2>/dev/null || true)"
  [ "${have%%-*}" = "$HASH" ] || return 1
  local extras=",${have#*-},"
  [[ "$extras" == *,dev,* ]] && return 0
  [[ "$extras" == *,qwen,* ]] && extras="${extras}localmodel,"  # the qwen extra holds localmodel
  local e; IFS=',' read -ra asked <<< "$EXTRAS"
  for e in "${asked[@]}"; do [[ -z "$e" || "$extras" == *,"$e",* ]] || return 1; done
}
if ! installed; then
  "$PY" -m pip install -q --disable-pip-version-check --upgrade pip
  # The CPU build of torch first, pinned: an unpinned torch pulled in by sentence-transformers
  # would fetch several GB of CUDA packages.
  "$PY" -m pip install -q --disable-pip-version-check "${TORCH_SPEC:-torch==2.13.0}"
  # llama-cpp-python (the localmodel extra) compiles llama.cpp here: for x86 with AVX2, and the AVX-512
  # this CPU has (prompts read 1.3-1.4x faster), never AMX (scripts/llama_cmake_args.sh says why).
  export CMAKE_ARGS="${CMAKE_ARGS:-$(bash "$ROOT/scripts/llama_cmake_args.sh")}"
  # pip reuses a wheel it built before (its cache ignores CMAKE_ARGS): a native build cached by an
  # earlier install would come back, so llama-cpp-python is built without the cache when the venv lacks it.
  LLAMA_SPEC="$(grep -o 'llama-cpp-python\[server\]==[0-9.]*' "$ROOT/pyproject.toml" | head -1 || true)"
  if [[ "$EXTRAS" == *dev* || "$EXTRAS" == *localmodel* || "$EXTRAS" == *qwen* ]] && [ -n "$LLAMA_SPEC" ] &&
     ! "$PY" -m pip show -q llama-cpp-python >/dev/null 2>&1; then
    "$PY" -m pip install -q --disable-pip-version-check --no-cache-dir "$LLAMA_SPEC"
  fi
  "$PY" -m pip install -q --disable-pip-version-check -e "$ROOT${EXTRAS:+[$EXTRAS]}"
  echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
