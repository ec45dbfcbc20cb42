"""A corpus index from 10k to 1M passages on one machine (issue 29): build time and peak memory per
stage with the growth exponent between sizes, `ppr` latency warm and a cold `ask`, Recall@5 of `ppr`
and dense on the generated multi-hop questions, and the cost of adding and removing 100 documents.

    python benchmarks/scale.py run --sizes 10000 100000 --embedder minilm --out /tmp/scale-minilm
    python benchmarks/scale.py run --sizes 10000 100000 1000000 --embedder hashing --out /tmp/scale-hash
    python benchmarks/scale.py report /tmp/scale-minilm /tmp/scale-hash

Every build, query and incremental measurement runs in a process of its own (peak memory is that
process's), writes JSON under --out, and `report` prints the tables. The corpus comes from
benchmarks/scale_corpus.py (model-free extraction, `-e nolm`; communities built). `--store postgres`
indexes into the embedded PostgreSQL the tests use (pgserver) instead of SQLite. benchmarks/scale_pg.py
measures PostgreSQL against SQLite and two indexing processes sharing one index."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from scale_corpus import ScaleCorpus  # noqa: E402
from scale_measure import (  # noqa: E402
    Latencies,
    MemoryTimer,
    documents,
    peak_rss_mb,
    process_status,
    recall_at,
    scale_settings,
    top_modularity,
)

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.models import NodeType  # noqa: E402

QUESTIONS = 200
EXACT_QUESTIONS = 100  # the exact walk's recall beside the default's (0.6 s a question at 1M)
CHANGE = 100  # documents added and removed by the incremental measurement
PASS_BUDGET_S = 120  # more timed passes over the questions only while they took less than this


def build(index: str, passages: int, embedder: str, seed: int) -> dict[str, Any]:
    """One build from scratch, through the indexer with a timer that also records peak memory."""
    from thinkgraph.index.pipeline import Indexer

    corpus = ScaleCorpus(passages, seed)
    settings = scale_settings(embedder)
    timer = MemoryTimer()
    with ThinkGraph(index, settings=settings, create=True) as tg:
        indexer = Indexer(tg.store, tg.embedder, tg.make_extractor("nolm"), settings.index, counter=tg.counter)
        indexer.timer = timer
        started = time.perf_counter()
        report = asyncio.run(indexer.run(documents(corpus)))
        seconds = time.perf_counter() - started
        tg.mark_changed()
        stats = tg.stats()
    timer.close()
    return {"passages": passages, "embedder": embedder, "seconds": round(seconds, 2),
            "stages": timer.rounded(), "stage_peak_rss_mb": {k: round(v) for k, v in timer.peaks.items()},
            "peak_rss_mb": round(peak_rss_mb()), "nodes": stats["nodes"], "edges": stats["edges"],
            "synonyms": report.synonyms, "communities": report.communities, "size_mb": round(stats["size_bytes"] / 1e6)}


def _cold_asks(index: str, questions: list[dict[str, Any]], embedder: str, cache: Path) -> dict[str, Any]:
    """`thinkgraph ask -m ppr` in new processes: the first with an empty view cache (it builds the
    retrieval arrays and keeps them), then three that read them."""
    env = dict(os.environ, THINKGRAPH_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1")
    env.pop("THINKGRAPH_LLM_BASE_URL", None)
    if embedder == "hashing":
        env["THINKGRAPH_EMBED_PROVIDER"] = "hashing"
    seconds = []
    for q in questions[:4]:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "thinkgraph", "-i", index, "ask", q["question"], "-m", "ppr", "--json"],
                       env=env, check=True, capture_output=True)
        seconds.append(round(time.perf_counter() - started, 2))
    return {"first_s": seconds[0], "cached_s": sorted(seconds[1:])[1], "all_s": seconds}


def query(index: str, passages: int, embedder: str, seed: int, repeats: int, cache: Path) -> dict[str, Any]:
    """Warm `ppr` latency and Recall@5 of `ppr` and dense (`naive`) in this process, a cold `ask` in
    new processes, and this process's memory once it has answered (a serving worker's)."""
    questions = ScaleCorpus(passages, seed).questions(QUESTIONS)
    cold = _cold_asks(index, questions, embedder, cache)
    os.environ["THINKGRAPH_CACHE_DIR"] = str(cache)  # the view the cold asks kept
    out: dict[str, Any] = {"passages": passages, "embedder": embedder, "cold_ask": cold}
    with ThinkGraph.open(index, settings=scale_settings(embedder)) as tg:
        for method in ("ppr", "naive"):
            asyncio.run(tg.aretrieve(questions[0]["question"], method, top_k=5))  # builds the view
            latencies, recalls = Latencies(), []
            started_all = time.perf_counter()
            for r in range(repeats):
                if r and time.perf_counter() - started_all > PASS_BUDGET_S:
                    break  # (a million passages: one pass of 200 questions is enough samples and minutes long)
                for q in questions:
                    started = time.perf_counter()
                    answer = asyncio.run(tg.aretrieve(q["question"], method, top_k=5))
                    latencies.add(started)
                    if r == 0:
                        ranked = list(dict.fromkeys(c.doc_id for c in answer.citations))
                        recalls.append(recall_at(ranked, q["supporting_ids"], 5))
            out[method] = {**latencies.summary(), "recall_at_5": round(100 * sum(recalls) / len(recalls), 1)}
        out["serving"] = process_status()
        out["ppr_exact"] = _exact_walk(tg, questions[:EXACT_QUESTIONS])
    return out


def _exact_walk(tg: ThinkGraph, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall@5 and latency of `ppr` with the exact walk over the whole graph ([retrieval] walk = exact),
    beside the default (local from 100k passages), on the first questions."""
    latencies, recalls = Latencies(), []
    for q in questions:
        started = time.perf_counter()
        answer = asyncio.run(tg.aretrieve(q["question"], "ppr", top_k=5, walk="exact"))
        latencies.add(started)
        recalls.append(recall_at(list(dict.fromkeys(c.doc_id for c in answer.citations)), q["supporting_ids"], 5))
    return {**latencies.summary(), "recall_at_5": round(100 * sum(recalls) / len(recalls), 1)}


def incremental(index: str, passages: int, embedder: str, seed: int) -> dict[str, Any]:
    """Remove CHANGE documents (spread over the corpus), then add them back: seconds of each, and
    whether the index after both equals the one before (SYNONYM edges; communities' modularity)."""
    corpus = ScaleCorpus(passages, seed)
    step = max(1, passages // CHANGE)
    chosen = {f"sc{i:07d}" for i in range(0, passages, step)}
    chosen = set(sorted(chosen)[:CHANGE])
    settings = scale_settings(embedder)
    settings.index.prepare_view = False  # timed on its own below
    os.environ["THINKGRAPH_CACHE_DIR"] = str(Path(index).parent / f"cache_incremental{passages}")
    with ThinkGraph.open(index, settings=settings) as tg:
        before = _derived_summary(tg)
        started = time.perf_counter()
        tg.view.prepare()  # the view the index had before the change (built whole here, if not kept)
        view_before_s = time.perf_counter() - started
        started = time.perf_counter()
        tg.remove_documents(sorted(chosen))
        removed_s = time.perf_counter() - started
        started = time.perf_counter()
        report = tg.add_documents(d for d in documents(corpus) if d.id in chosen)
        added_s = time.perf_counter() - started
        after = _derived_summary(tg)
        started = time.perf_counter()
        tg.view.prepare()  # what `index` does at its end by default ([index] prepare_view)
        view_s = time.perf_counter() - started
        passages_graph = tg.view.vectors(NodeType.CHUNK).origin
    return {"passages": passages, "embedder": embedder, "changed_documents": len(chosen),
            "remove_s": round(removed_s, 2), "add_s": round(added_s, 2), "view_s": round(view_s, 2),
            "view_before_s": round(view_before_s, 2), "passages_graph": passages_graph,
            "add_timings": report.timings,
            "synonyms_searched": report.synonyms_searched, "communities_written": report.communities_written,
            "communities": report.communities, "same_synonyms": before["synonyms"] == after["synonyms"],
            "modularity_before": before["modularity"], "modularity_after": after["modularity"],
            **process_status()}


def _derived_summary(tg: ThinkGraph) -> dict[str, Any]:
    synonyms = sorted((e.src, e.dst) for e in tg.store.iter_edges(["SYNONYM"]))
    return {"synonyms": synonyms, "modularity": round(top_modularity(tg.store), 4)}


# orchestration -------------------------------------------------------------------------------------
def _child(args: list[str], out: Path, log: Path) -> dict[str, Any]:
    with log.open("a", encoding="utf-8") as handle:
        subprocess.run([sys.executable, __file__, *args, "--json", str(out)], check=True, stdout=handle,
                       stderr=subprocess.STDOUT)
    return json.loads(out.read_text(encoding="utf-8"))


def run(sizes: list[int], embedder: str, out: Path, seed: int, repeats: int, store: str,
        incremental_at: list[int]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    server = None
    if store == "postgres":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import pg_support

        url, server = pg_support.start_server()
    try:
        for n in sizes:
            index = str(out / f"scale{n}.db") if server is None else pg_support.with_schema(url, f"scale{n}")
            common = ["--index", index, "--passages", str(n), "--embedder", embedder, "--seed", str(seed)]
            log = out / f"log{n}.txt"
            print(json.dumps(_child(["build", *common], out / f"build{n}.json", log)), flush=True)
            if n in incremental_at:
                print(json.dumps(_child(["incremental", *common], out / f"incremental{n}.json", log)), flush=True)
            print(json.dumps(_child(["query", *common, "--repeats", str(repeats), "--cache", str(out / f"cache{n}")],
                                    out / f"query{n}.json", log)), flush=True)
    finally:
        if server is not None:
            pg_support.stop_server(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run")
    go.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    go.add_argument("--incremental-at", type=int, nargs="*", default=[100_000])
    go.add_argument("--out", type=Path, required=True)
    go.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    for name in ("build", "query", "incremental"):
        one = sub.add_parser(name)
        one.add_argument("--index", required=True)
        one.add_argument("--passages", type=int, required=True)
        one.add_argument("--json", type=Path, required=True)
        one.add_argument("--cache", type=Path, default=Path("/tmp/thinkgraph-scale-cache"))
    for one in (go, *(sub.choices[n] for n in ("build", "query", "incremental"))):
        one.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
        one.add_argument("--seed", type=int, default=0)
        one.add_argument("--repeats", type=int, default=3)
    report = sub.add_parser("report")
    report.add_argument("folders", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "run":
        run(args.sizes, args.embedder, args.out, args.seed, args.repeats, args.store, args.incremental_at)
    elif args.command == "report":
        from scale_report import print_report

        print_report(args.folders)
    else:
        work = {"build": lambda: build(args.index, args.passages, args.embedder, args.seed),
                "query": lambda: query(args.index, args.passages, args.embedder, args.seed, args.repeats, args.cache),
                "incremental": lambda: incremental(args.index, args.passages, args.embedder, args.seed)}
        args.json.write_text(json.dumps(work[args.command](), indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
