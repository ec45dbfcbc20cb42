"""SQLite and PostgreSQL side by side on MuSiQue (issue #21): index-build time and size, retrieval
latency of `ask` without an LLM (the method's evidence only, as `eval --retrieval-only` measures), and
1 vs 2 `thinkgraph index` processes sharing one corpus with a fake LLM server of fixed latency.

    .venv/bin/python benchmarks/store_backends.py --data ../shared/data/musique [--postgres URL]

Without --postgres an embedded PostgreSQL 16 + pgvector (the `pgserver` package) is started, its data
in a temporary folder. The embedder is the model-free hashing one (384 dimensions) unless --embedder
minilm: the comparison is of the stores, and MiniLM's encoding time would be the same on both.
Builds run `thinkgraph index corpus.jsonl -e import --openie openie_gpt35.jsonl` as a subprocess;
latencies are measured in this process over all questions, --repeats passes after one warm-up pass
(the first query, which loads vectors and the graph from the store, is reported apart).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the fake LLM server and the embedded PostgreSQL of the tests

from pg_support import start_server, stop_server, with_schema  # noqa: E402
from support import Behaviour, FakeOpenAIServer  # noqa: E402
from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.asyncutil import run_sync  # noqa: E402
from thinkgraph.config import load_settings  # noqa: E402

ASYNC_COMMIT = "&options=-c%20synchronous_commit%3Doff"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def write_config(folder: Path, embedder: str, llm_url: str | None = None) -> Path:
    path = folder / f"tg-{embedder}.toml"
    embedding = '[embedding]\nprovider = "hashing"\ndim = 384\n' if embedder == "hashing" else ""
    llm = (f'[llm]\nbase_url = "{llm_url}"\nmodel = "fake"\nconcurrency = 4\nmax_retries = 0\n'
           '[index]\nbatch_docs = 4\ndocument_summaries = "first_sentences"\nsummarize_communities = false\n'
           if llm_url else "")
    path.write_text(embedding + llm, "utf-8")
    return path


def thinkgraph(config: Path, index: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
    return subprocess.run([sys.executable, "-m", "thinkgraph", "-c", str(config), "-i", index, *args],
                          capture_output=True, text=True, env=env, timeout=3600)


def build(config: Path, index: str, data: Path) -> dict[str, Any]:
    started = time.perf_counter()
    done = thinkgraph(config, index, "index", str(data / "corpus.jsonl"), "-e", "import", "--openie",
                      str(data / "openie_gpt35.jsonl"), "--json")
    if done.returncode:
        raise SystemExit(f"index failed: {done.stderr}")
    return {"seconds": time.perf_counter() - started, **json.loads(done.stdout)}


def retrieval_latency(config: Path, index: str, questions: list[str], repeats: int) -> dict[str, float]:
    with ThinkGraph(index, settings=load_settings(config), create=False) as tg:
        started = time.perf_counter()
        run_sync(tg.aretrieve(questions[0]))
        first_ms = 1000 * (time.perf_counter() - started)
        for q in questions:  # warm-up pass
            run_sync(tg.aretrieve(q))
        times = []
        for _ in range(repeats):
            for q in questions:
                started = time.perf_counter()
                run_sync(tg.aretrieve(q))
                times.append(1000 * (time.perf_counter() - started))
        size_mb = tg.store.size_bytes() / 1e6
    return {"first_ms": first_ms, "p50_ms": statistics.median(times), "p95_ms": percentile(times, 0.95),
            "size_mb": size_mb}


def fixed_reply(payload: dict[str, Any]) -> str:
    """One entity per chunk (its first word) and a link to a hub: a stand-in LLM extraction."""
    prompt = payload["messages"][-1]["content"]
    if "## Text" not in prompt:
        return "A summary."
    name = prompt.split("## Text", 1)[1].split()[1].strip(".,:;\"'")
    return json.dumps({"entities": [{"entity_name": name, "entity_type": "Thing"}],
                       "relationships": [{"source_entity": name, "target_entity": "Hub", "relation": "mentions"}]})


def scale_out(folder: Path, data: Path, locations: dict[str, list[str]], docs: int, delay_s: float,
              embedder: str) -> list[tuple[str, int, float, int]]:
    """Wall time of 1 and of 2 concurrent index runs over the same ``docs`` passages."""
    corpus = folder / "subset.jsonl"
    corpus.write_text("\n".join((data / "corpus.jsonl").read_text("utf-8").splitlines()[:docs]) + "\n", "utf-8")
    rows = []
    with FakeOpenAIServer() as server:
        server.responder = fixed_reply
        server.default = Behaviour(delay_s=delay_s)
        config = write_config(folder, embedder, server.url)
        for backend, (one, two) in locations.items():
            for processes, index in ((1, one), (2, two)):
                before = len(server.chat_requests)
                env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
                cmd = [sys.executable, "-m", "thinkgraph", "-c", str(config), "-i", index, "index", str(corpus),
                       "-e", "llm", "--json"]
                started = time.perf_counter()
                runs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                        for _ in range(processes)]
                for run in runs:
                    _, err = run.communicate(timeout=3600)
                    if run.returncode:
                        raise SystemExit(f"index failed: {err}")
                rows.append((backend, processes, time.perf_counter() - started,
                             len(server.chat_requests) - before))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "musique")
    parser.add_argument("--postgres", default=None, help="PostgreSQL URL (default: an embedded server).")
    parser.add_argument("--embedder", choices=("hashing", "minilm"), default="hashing")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale-docs", type=int, default=96, help="Passages for the 1-vs-2-process run.")
    parser.add_argument("--llm-delay", type=float, default=1.0, help="Seconds per fake LLM call.")
    args = parser.parse_args()
    server_url, server = (args.postgres, None) if args.postgres else start_server()
    try:
        compare(args, server_url)
    finally:
        stop_server(server)


def compare(args: argparse.Namespace, server_url: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tg-stores-"))
    tag = str(int(time.time()))
    indexes = {"sqlite": str(folder / "musique.db"), "postgres": with_schema(server_url, f"bench_{tag}"),
               # commits that do not wait for the disk: SQLite's synchronous=NORMAL durability
               "postgres, synchronous_commit off": with_schema(server_url, f"bench_async_{tag}") + ASYNC_COMMIT}
    config = write_config(folder, args.embedder)
    questions = [json.loads(line)["question"] for line in (args.data / "questions_dev.jsonl").read_text().splitlines()
                 if line.strip()]
    print(f"MuSiQue: {args.data}, {len(questions)} questions, embedder {args.embedder}; machine shared, 2 cores")
    print("store | build s | passages | nodes | size MB | first query ms | retrieval p50 ms | p95 ms")
    for backend, index in indexes.items():
        built = build(config, index, args.data)
        latency = retrieval_latency(config, index, questions, args.repeats)
        with ThinkGraph(index, settings=load_settings(config), create=False) as tg:
            nodes = sum(tg.store.count_nodes().values())
        print(f"{backend} | {built['seconds']:.1f} | {built['indexed']} | {nodes} | {latency['size_mb']:.1f} | "
              f"{latency['first_ms']:.0f} | {latency['p50_ms']:.1f} | {latency['p95_ms']:.1f}", flush=True)
    locations = {"sqlite": [str(folder / "one.db"), str(folder / "two.db")],
                 "postgres": [with_schema(server_url, f"one_{tag}"), with_schema(server_url, f"two_{tag}")]}
    print(f"\n1 vs 2 index processes, {args.scale_docs} passages, fake LLM {args.llm_delay} s per call, "
          "4 calls at a time per process")
    print("store | processes | wall s | LLM calls | speed-up")
    rows = scale_out(folder, args.data, locations, args.scale_docs, args.llm_delay, args.embedder)
    for backend, processes, seconds, calls in rows:
        single = next(s for b, p, s, _ in rows if b == backend and p == 1)
        print(f"{backend} | {processes} | {seconds:.1f} | {calls} | {single / seconds:.2f}x")


if __name__ == "__main__":
    main()
