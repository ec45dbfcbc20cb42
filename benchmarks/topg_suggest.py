"""ToPG's Suggest step on MuSiQue with the OpenIE proposition graph and no LLM: Recall@2/5 of gold
passages for Suggest-naive and for Suggest-local iterated without Select (walks seeded on naive's
top propositions), against dense passage retrieval; and the time per Suggest call.

    .venv/bin/python benchmarks/topg_suggest.py --data ../shared/data/musique [--index musique.db]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.methods.topg import Suggester, ToPGConfig, build_proposition_graph  # noqa: E402
from thinkgraph.retrieval.dense import DenseRetriever  # noqa: E402


def recall(docs: list[str], gold: list[str], k: int) -> float:
    return len(set(docs[:k]) & set(gold)) / len(gold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/musique"))
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--seeds", type=int, default=5, help="naive propositions that seed the walk")
    parser.add_argument("--iterations", type=int, default=2, help="Suggest-local rounds (pool grows)")
    args = parser.parse_args()
    questions = [json.loads(x) for x in (args.data / "questions_dev.jsonl").read_text().splitlines() if x]
    index = args.index or Path(tempfile.mkdtemp(prefix="tg-topg-")) / "musique.db"
    with ThinkGraph(index) as tg:
        tg.index([args.data / "corpus.jsonl"], openie=args.data / "openie_gpt35.jsonl")
        view = tg.view
        started = time.perf_counter()
        graph = build_proposition_graph(view)
        suggester = Suggester(graph, ToPGConfig())
        print(f"proposition graph: {graph.n} propositions, {len(graph.connectors)} entities and passages, "
              f"built in {time.perf_counter() - started:.1f} s")
        dense = DenseRetriever(view)

        def docs(chunks: list[str]) -> list[str]:
            return [n.props["doc_id"] for n in tg.store.get_nodes(chunks)]

        rows: dict[str, list[list[str]]] = {"dense": [], "naive": [], "local": []}
        naive_ms, local_ms = [], []
        for q in questions:
            vec = view.embed_query(q["question"])
            rows["dense"].append([p.doc_id for p in dense.retrieve(q["question"], 10).passages])
            t = time.perf_counter()
            naive = suggester.naive(vec)
            naive_ms.append(1000 * (time.perf_counter() - t))
            rows["naive"].append(docs(suggester.passages_of(naive)))
            pool = naive[: args.seeds]
            for _ in range(args.iterations):
                t = time.perf_counter()
                pool = pool + suggester.local(vec, pool)
                local_ms.append(1000 * (time.perf_counter() - t))
            rows["local"].append(docs(suggester.passages_of(pool)))
    golds = [q["supporting_ids"] for q in questions]
    print(f"{len(questions)} questions | R@2 | R@5 | ms per Suggest call (median)")
    labels = {"dense": "dense passage retrieval", "naive": "Suggest-naive (k=20)",
              "local": f"Suggest-local x{args.iterations}, seeded on naive top-{args.seeds}, no Select"}
    times = {"dense": "-", "naive": f"{statistics.median(naive_ms):.1f}", "local": f"{statistics.median(local_ms):.1f}"}
    for key, lists in rows.items():
        r2 = 100 * statistics.mean(recall(d, g, 2) for d, g in zip(lists, golds, strict=True))
        r5 = 100 * statistics.mean(recall(d, g, 5) for d, g in zip(lists, golds, strict=True))
        print(f"{labels[key]} | {r2:.1f} | {r5:.1f} | {times[key]}")


if __name__ == "__main__":
    main()
