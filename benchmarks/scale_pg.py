"""PostgreSQL against SQLite on the scale corpus (issue 29), and two indexing processes sharing one
PostgreSQL index against one.

    python benchmarks/scale_pg.py --passages 100000 --out /tmp/scale-pg

1. The build of ``--passages`` passages (benchmarks/scale.py's build, the hashing embedder) into SQLite
   and into the embedded PostgreSQL the tests use (pgserver), then the incremental add and removal
   of 100 documents on each: seconds, and PostgreSQL's time over SQLite's (goal: at most 2x).
2. LLM indexing of ``--llm-passages`` passages (benchmarks/perf_index_llm.py's corpus and fake
   OpenAI-compatible server, 200 ms per call, 16 calls in flight per process) by one `thinkgraph index`
   process, then by two started together on one fresh PostgreSQL index: documents per second, and the
   ratio of two processes' throughput to one's (goal: at least 1.7). The hashing embedder keeps the two
   processes from competing for the two cores over encoding, so the figure measures the sharing."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from perf_index_llm import FakeServer, write_corpus  # noqa: E402

import pg_support  # noqa: E402


def _scale(command: str, index: str, passages: int, out: Path) -> dict[str, Any]:
    subprocess.run([sys.executable, str(HERE / "scale.py"), command, "--index", index, "--passages", str(passages),
                    "--embedder", "hashing", "--json", str(out)], check=True)
    return dict(json.loads(out.read_text(encoding="utf-8")))


def stores(url: str, passages: int, out: Path) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, index in (("sqlite", str(out / "scale.db")), ("postgres", pg_support.with_schema(url, "scale"))):
        build = _scale("build", index, passages, out / f"build-{name}.json")
        change = _scale("incremental", index, passages, out / f"incremental-{name}.json")
        result[name] = {"build_s": build["seconds"], "add_s": change["add_s"], "remove_s": change["remove_s"],
                        "stages": build["stages"]}
    for key in ("build_s", "add_s", "remove_s"):
        result[f"postgres_over_sqlite_{key}"] = round(result["postgres"][key] / result["sqlite"][key], 2)
    return result


def _index_processes(url: str, corpus: Path, server: FakeServer, processes: int, config: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
    env |= {"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_EMBED_PROVIDER": "hashing", "HF_HUB_OFFLINE": "1"}
    cli = [sys.executable, "-m", "thinkgraph", "-c", str(config), "-i", url, "index", str(corpus), "-e", "llm"]
    started = time.perf_counter()
    running = [subprocess.Popen(cli, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for _ in range(processes)]
    for proc in running:
        _, err = proc.communicate()
        if proc.returncode:
            raise RuntimeError(err.decode()[-2000:])
    return time.perf_counter() - started


def shared(url: str, passages: int, out: Path, repeats: int) -> dict[str, Any]:
    corpus = out / f"llm{passages}.jsonl"
    write_corpus(corpus, passages)
    config = out / "thinkgraph.toml"
    config.write_text("[llm]\nconcurrency = 16\nmodel = \"m\"\n", encoding="utf-8")
    seconds: dict[int, list[float]] = {1: [], 2: []}
    for r in range(repeats):
        for processes in (1, 2):
            server = FakeServer(0.2, out / f"calls-{processes}-{r}.jsonl")
            try:
                index = pg_support.with_schema(url, f"llm{processes}_{r}")
                seconds[processes].append(round(_index_processes(index, corpus, server, processes, config), 1))
                calls = len(server.calls())
            finally:
                server.close()
            print(f"{processes} process(es): {seconds[processes][-1]} s, {calls} calls", flush=True)
    one, two = sorted(seconds[1])[len(seconds[1]) // 2], sorted(seconds[2])[len(seconds[2]) // 2]
    return {"passages": passages, "seconds_one": seconds[1], "seconds_two": seconds[2],
            "docs_per_s_one": round(passages / one, 1), "docs_per_s_two": round(passages / two, 1),
            "two_over_one": round(one / two, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--llm-passages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--skip-stores", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    url, server = pg_support.start_server()
    try:
        result = {"shared_index": shared(url, args.llm_passages, args.out, args.repeats)}
        if not args.skip_stores:
            result["stores"] = stores(url, args.passages, args.out)
    finally:
        pg_support.stop_server(server)
    (args.out / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
