"""Index MuSiQue with its OpenIE triples and measure the foundation: build time, index size, peak
memory, PPR latency, and Recall@2/5 of gold supporting passages for dense and graph-aware retrieval.

    .venv/bin/python benchmarks/musique_retrieval.py --data ../shared/data/musique

Prints numbers; latencies are medians over --repeats passes over all questions, measured in this
process, with dense retrieval as the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.graph.ppr import personalized_pagerank  # noqa: E402
from thinkgraph.models import NodeType  # noqa: E402
from thinkgraph.retrieval.dense import DenseRetriever  # noqa: E402
from thinkgraph.retrieval.evidence import GraphRetriever  # noqa: E402


def recall_at(ranked: list[str], gold: list[str], k: int) -> float:
    return len(set(ranked[:k]) & set(gold)) / len(gold) if gold else 0.0


def evaluate(retriever, questions: list[dict], repeats: int) -> dict[str, float]:  # noqa: ANN001
    per_pass: list[float] = []
    recalls = {2: [], 5: [], 10: []}
    for r in range(repeats):
        started = time.perf_counter()
        for q in questions:
            ranked = [p.doc_id for p in retriever.retrieve(q["question"], 10).passages]
            if r == 0:
                for k in recalls:
                    recalls[k].append(recall_at(ranked, q["supporting_ids"], k))
        per_pass.append((time.perf_counter() - started) / len(questions))
    return {"R@2": 100 * np.mean(recalls[2]), "R@5": 100 * np.mean(recalls[5]), "R@10": 100 * np.mean(recalls[10]),
            "ms_per_query": 1000 * statistics.median(per_pass)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/musique"))
    parser.add_argument("--index", type=Path, default=None, help="Index file (default: a temporary one).")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.data / "questions_dev.jsonl").read_text().splitlines() if line]
    workdir = Path(tempfile.mkdtemp(prefix="tg-bench-"))
    index_path = args.index or workdir / "musique.db"

    settings = Settings()
    with ThinkGraph(index_path, settings=settings) as tg:
        started = time.perf_counter()
        report = tg.index([args.data / "corpus.jsonl"], openie=args.data / "openie_gpt35.jsonl")
        build_s = time.perf_counter() - started
        stats = tg.stats()
        print(f"build: {build_s:.1f} s for {report.indexed} passages ({report.unchanged} already indexed); "
              f"synonym edges {report.synonyms}; communities {report.communities} in {report.community_levels} levels")
        print(f"index size on disk: {tg.store.size_bytes() / 1e6:.1f} MB")
        print(f"nodes: {stats['nodes']}")
        print(f"edges: {stats['edges']}")

        view = tg.view
        view.vectors(NodeType.CHUNK)  # load vectors and the graph once, outside the timings
        graph = view.entity_passage_graph
        rng = np.random.default_rng(0)
        ppr_ms = []
        for _ in range(args.repeats * 10):
            reset = np.zeros(graph.n)
            reset[rng.choice(graph.n, 5, replace=False)] = 1.0
            started = time.perf_counter()
            personalized_pagerank(graph.adjacency, reset, damping=settings.retrieval.damping)
            ppr_ms.append(1000 * (time.perf_counter() - started))
        print(f"PPR over {graph.n} nodes / {graph.adjacency.nnz} directed edges: "
              f"median {statistics.median(ppr_ms):.1f} ms")

        dense = evaluate(DenseRetriever(view), questions, args.repeats)
        rows = [("dense passage retrieval", dense)]
        default = settings.retrieval
        rows.append((f"graph-aware `ask` default (dense_mix {default.dense_mix})",
                     evaluate(GraphRetriever(view, default), questions, args.repeats)))
        for mix in (0.0, 0.5):
            if mix != default.dense_mix:
                variant = default.model_copy(update={"dense_mix": mix})
                rows.append((f"graph-aware, dense_mix {mix}",
                             evaluate(GraphRetriever(view, variant), questions, args.repeats)))

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak_mb:.0f} MB")
    print(f"\n{len(questions)} questions | R@2 | R@5 | R@10 | ms/query (query embedding cached) | time vs dense")
    for name, r in rows:
        print(f"{name} | {r['R@2']:.1f} | {r['R@5']:.1f} | {r['R@10']:.1f} | {r['ms_per_query']:.1f} | "
              f"{r['ms_per_query'] / dense['ms_per_query']:.2f}x")


if __name__ == "__main__":
    main()
