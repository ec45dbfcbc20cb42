"""How fast this machine's llama-cpp-python build reads a prompt: the same prompt (the first tokens of a
corpus file) read from scratch several times with no prompt logits, as scripts/local_model.sh serves,
tokens a second each time and the median, with the CPU features the build uses.

    .venv/bin/python benchmarks/prompt_speed.py ~/.cache/thinkgraph/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \
        --text ../shared/data/musique/corpus.jsonl --tokens 950 --threads 2

Run it on idle cores: llama.cpp's threads spin-wait on a core another process takes. Measured with
Qwen2.5-Coder-1.5B Q4_K_M on two AVX-512 EPYC cores (docs/local-models.md): 64-67 tokens/s with the AVX2
build, 89-99 with the AVX-512 one scripts/env.sh now builds (scripts/llama_cmake_args.sh).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="a GGUF file")
    parser.add_argument("--text", type=Path, required=True, help="a text file whose first tokens are the prompt")
    parser.add_argument("--tokens", type=int, default=950, help="prompt tokens (ppr's median prompt: 952)")
    parser.add_argument("--threads", type=int, default=2, help="threads for reading (and writing)")
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args()
    from llama_cpp import Llama, llama_print_system_info  # (the localmodel extra)

    print(llama_print_system_info().decode().strip())
    llm = Llama(model_path=str(args.model), n_ctx=max(2048, args.tokens + 64), n_threads=args.threads,
                n_threads_batch=args.threads, logits_all=False, verbose=False)
    with args.text.open(encoding="utf-8") as f:
        tokens = llm.tokenize(f.read(args.tokens * 8).encode())[: args.tokens]
    speeds = []
    for _ in range(args.repeats):
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        speeds.append(len(tokens) / (time.perf_counter() - started))
    print(f"{len(tokens)} prompt tokens, {args.threads} threads: tokens/s {[round(s, 1) for s in speeds]}, "
          f"median {statistics.median(speeds):.1f}")


if __name__ == "__main__":
    main()
