#!/usr/bin/env bash
# The CMake arguments llama-cpp-python's build of llama.cpp gets (scripts/env.sh): a portable x86 build
# (AVX2, FMA, F16C) plus the AVX-512 extensions this CPU reports, never AMX.
#   bash scripts/llama_cmake_args.sh [cpuinfo file]   (default /proc/cpuinfo; none: the portable set)
# Why not -DGGML_NATIVE=ON: a native build uses the AMX tiles a CPU reports, and in sandboxes that do not
# grant the tile state its first matrix product crashes (SIGSEGV in ggml_backend_amx_mul_mat). Why AVX-512
# where the CPU has it: Qwen2.5-Coder-1.5B Q4_K_M read a 950-token prompt at 89-100 tokens/s on two AVX-512
# EPYC cores against 58-69 with the AVX2 build (benchmarks/prompt_speed.py; docs/local-models.md). The build
# is for this CPU: a .venv moved to a machine without these extensions stops with an illegal instruction.
set -euo pipefail
CPUINFO="${1:-/proc/cpuinfo}"
ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
FLAGS=" $(grep -m1 -E '^flags[[:space:]]*:' "$CPUINFO" 2>/dev/null | cut -d: -f2- || true) "
# ggml's AVX-512 build uses the foundation and the BW, VL, DQ and CD extensions together
if [[ "$FLAGS" == *" avx512f "* && "$FLAGS" == *" avx512bw "* && "$FLAGS" == *" avx512vl "* &&
      "$FLAGS" == *" avx512dq "* && "$FLAGS" == *" avx512cd "* ]]; then
  ARGS+=" -DGGML_AVX512=ON"
  # (the cpuinfo flag, the ggml option)
  for pair in avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16; do
    [[ "$FLAGS" == *" ${pair%%:*} "* ]] && ARGS+=" -DGGML_${pair#*:}=ON"
  done
fi
echo "$ARGS"
