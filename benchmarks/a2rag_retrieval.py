"""A2RAG's agentic retriever on MuSiQue with the OpenIE graph and no LLM (every stage runs,
sufficiency ignored): Recall@2/5 after each stage against dense retrieval, and the extraction-loss
stress test of A2RAG §IV-F (delete 0-40% of graph nodes with their edges, fixed seeds).

    .venv/bin/python benchmarks/a2rag_retrieval.py --data ../shared/data/musique [--index musique.db]

The index is built (or reused) as benchmarks/musique_retrieval.py builds it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.methods.a2rag import A2RAGConfig, AgenticRetriever  # noqa: E402
from thinkgraph.methods.a2rag.graph import build_entity_graph  # noqa: E402
from thinkgraph.retrieval.dense import DenseRetriever  # noqa: E402


def recall(ranked_docs: list[str], gold: list[str], k: int) -> float:
    return len(set(ranked_docs[:k]) & set(gold)) / len(gold)


def doc_ids(tg: ThinkGraph, chunks: list[str]) -> list[str]:
    return [n.props["doc_id"] for n in tg.store.get_nodes(chunks)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/musique"))
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--fractions", default="0,0.1,0.2,0.3,0.4")
    parser.add_argument("--seeds", type=int, default=3, help="Random seeds per deletion fraction.")
    args = parser.parse_args()
    questions = [json.loads(x) for x in (args.data / "questions_dev.jsonl").read_text().splitlines() if x]
    index = args.index or Path(tempfile.mkdtemp(prefix="tg-a2rag-")) / "musique.db"
    with ThinkGraph(index) as tg:
        tg.index([args.data / "corpus.jsonl"], openie=args.data / "openie_gpt35.jsonl")
        view = tg.view
        full = build_entity_graph(view)
        config = A2RAGConfig(sufficiency="all")
        dense = DenseRetriever(view)
        dense_ranked = {q["id"]: [p.doc_id for p in dense.retrieve(q["question"], 10).passages] for q in questions}

        async def run(graph) -> dict[str, list[list[str]]]:  # noqa: ANN001
            retriever = AgenticRetriever(view, config, graph=graph)
            out: dict[str, list[list[str]]] = {"local": [], "bridge": [], "ppr": []}
            times = []
            for q in questions:
                started = time.perf_counter()
                state = await retriever.retrieve(q["question"])
                times.append(time.perf_counter() - started)
                for stage in out:
                    out[stage].append(doc_ids(tg, state.ranked_chunks(stage)))
            out["ms"] = [[f"{1000 * statistics.median(times):.1f}"]]
            return out

        ranked = asyncio.run(run(full))
        print(f"{len(questions)} questions, entity graph {len(full.ids)} nodes / {len(full.facts)} facts, "
              f"median retrieval {ranked['ms'][0][0]} ms/query (all stages)")
        print("retriever | R@2 | R@5")
        golds = [q["supporting_ids"] for q in questions]
        dense_lists = [dense_ranked[q["id"]] for q in questions]
        rows = [("dense passage retrieval", dense_lists), ("a2rag after stage 1 (local)", ranked["local"]),
                ("a2rag after stage 2 (+bridge)", ranked["bridge"]),
                ("a2rag after stage 3 (+PPR map-back)", ranked["ppr"])]
        for name, lists in rows:
            r2 = 100 * statistics.mean(recall(r, g, 2) for r, g in zip(lists, golds, strict=True))
            r5 = 100 * statistics.mean(recall(r, g, 5) for r, g in zip(lists, golds, strict=True))
            print(f"{name} | {r2:.1f} | {r5:.1f}")

        print("\nextraction loss: Recall@5 with a fraction of graph nodes deleted "
              f"(mean over {args.seeds} seeds)")
        print("deleted | a2rag (all stages) | graph-only one-hop | dense text")
        dense_r5 = 100 * statistics.mean(recall(r, g, 5) for r, g in zip(dense_lists, golds, strict=True))
        for fraction in (float(f) for f in args.fractions.split(",")):
            a2, local = [], []
            for seed in range(args.seeds if fraction > 0 else 1):
                degraded = asyncio.run(run(full.degraded(fraction, seed)))
                a2.append(statistics.mean(recall(r, g, 5) for r, g in zip(degraded["ppr"], golds, strict=True)))
                local.append(statistics.mean(recall(r, g, 5) for r, g in zip(degraded["local"], golds, strict=True)))
            print(f"{100 * fraction:.0f}% | {100 * statistics.mean(a2):.1f} | {100 * statistics.mean(local):.1f} | "
                  f"{dense_r5:.1f}")


if __name__ == "__main__":
    main()
