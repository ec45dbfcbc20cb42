#!/usr/bin/env bash
# The CMake arguments llama-cpp-python's build of llama.cpp gets (scripts/env.sh): a portable x86 build
# (AVX2, FMA, F16C) plus the AVX-512 extensions this CPU reports, never AMX.
#   bash scripts/llama_cmake_args.sh [cpuinfo file]   (default /proc/cpuinfo; none: the portable set)
# Why not -DGGML_NATIVE=ON: a native build uses the AMX tiles a CPU reports, and in sandboxes that do not
# grant the tile state its first matrix product crashes (SIGSEGV in ggml_backend_amx_mul_mat). Why AVX-512
# where the CPU has it: Qwen2.5-Coder-1.5B Q4_K_M read a 950-token prompt at 85-94 tokens/s on two AVX-512
# EPYC cores against 65-67 with the AVX2 build (docs/local-models.md).
set -euo pipefail
CPUINFO="${1:-/proc/cpuinfo}"
ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
FLAGS=" $(grep -m1 -E '^flags[[:space:]]*:' "$CPUINFO" 2>/dev/null | cut -d: -f2- || true) "
if [[ "$FLAGS" == *" avx512f "* ]]; then
  ARGS+=" -DGGML_AVX512=ON"
  # (the cpuinfo flag, the ggml option)
  for pair in avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16; do
    [[ "$FLAGS" == *" ${pair%%:*} "* ]] && ARGS+=" -DGGML_${pair#*:}=ON"
  done
fi
echo "$ARGS"
