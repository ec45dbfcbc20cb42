"""A2RAG's agentic retriever on MuSiQue with the OpenIE graph and no LLM (every stage runs,
sufficiency ignored): Recall@2/5/10 of the pool handed on after each stage, for each stage-3 form
(`paper`: eqs. 9-12, PPR from the seeds with p0 ∝ 1/deg and map-back; `shared_walk`: `ppr`'s walk from
the same seeds), beside dense retrieval and `ppr`; then the extraction-loss stress test of A2RAG §IV-F
(delete a fraction of graph nodes with their edges, fixed seeds) for the default form.

    .venv/bin/python benchmarks/a2rag_retrieval.py --data ../shared/data/musique [--index musique.db]
        [--limit 50] [--forms paper,shared_walk] [--fractions 0,0.1,0.2,0.3,0.4 | --fractions ""]

An existing --index is opened as it is (build one with `thinkgraph -i musique.db index
corpus.jsonl -e import --openie openie_gpt35.jsonl`); without one it is built in a temporary folder.
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
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.eval.metrics import recall_at_k  # noqa: E402
from thinkgraph.methods.a2rag import A2RAGConfig, AgenticRetriever  # noqa: E402
from thinkgraph.methods.a2rag.graph import EntityGraph, build_entity_graph  # noqa: E402
from thinkgraph.retrieval.dense import DenseRetriever  # noqa: E402

KS = (2, 5, 10)
STAGES = ("local", "bridge", "ppr")


def doc_ids(tg: ThinkGraph, chunks: list[str]) -> list[str]:
    nodes = {n.id: n for n in tg.store.get_nodes(chunks)}
    return list(dict.fromkeys(nodes[c].props["doc_id"] for c in chunks if c in nodes))


def recalls(lists: list[list[str]], golds: list[list[str]]) -> list[float]:
    return [100 * statistics.mean(recall_at_k(r, g, k) for r, g in zip(lists, golds, strict=True)) for k in KS]


def row(name: str, lists: list[list[str]], golds: list[list[str]]) -> str:
    return f"{name} | " + " | ".join(f"{r:.1f}" for r in recalls(lists, golds))


def run_form(tg: ThinkGraph, questions: list[dict[str, Any]], config: A2RAGConfig,
             graph: EntityGraph | None = None) -> tuple[dict[str, list[list[str]]], float]:
    """The pool after each stage, per question, and the median ms per question (all stages)."""
    retriever = AgenticRetriever(tg.view, config, graph=graph, walk_settings=tg.settings.retrieval)
    out: dict[str, list[list[str]]] = {stage: [] for stage in STAGES}
    times: list[float] = []

    async def run() -> None:
        for q in questions:
            started = time.perf_counter()
            state = await retriever.retrieve(q["question"])
            times.append(time.perf_counter() - started)
            for stage in STAGES:
                out[stage].append(doc_ids(tg, state.ranked_chunks(stage)))

    asyncio.run(run())
    return out, 1000 * statistics.median(times)


def loss_table(tg: ThinkGraph, questions: list[dict[str, Any]], golds: list[list[str]], full: EntityGraph,
               fractions: list[float], seeds: int, dense_r5: float) -> None:
    print(f"\nextraction loss: Recall@5 with a fraction of graph nodes deleted (mean over {seeds} seeds)")
    print("deleted | a2rag (all stages) | graph-only one-hop | dense text")
    config = A2RAGConfig(sufficiency="all")
    for fraction in fractions:
        a2, local = [], []
        for seed in range(seeds if fraction > 0 else 1):
            degraded, _ = run_form(tg, questions, config, full.degraded(fraction, seed))
            a2.append(recalls(degraded["ppr"], golds)[1])
            local.append(recalls(degraded["local"], golds)[1])
        print(f"{100 * fraction:.0f}% | {statistics.mean(a2):.1f} | {statistics.mean(local):.1f} | {dense_r5:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/musique"))
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="Only the first N questions.")
    parser.add_argument("--forms", default="paper,shared_walk", help="Stage-3 forms to measure.")
    parser.add_argument("--fractions", default="0,0.1,0.2,0.3,0.4", help='Deletion fractions ("" skips the test).')
    parser.add_argument("--seeds", type=int, default=3, help="Random seeds per deletion fraction.")
    args = parser.parse_args()
    questions = [json.loads(x) for x in (args.data / "questions_dev.jsonl").read_text().splitlines() if x]
    questions = questions[: args.limit]
    golds = [q["supporting_ids"] for q in questions]
    if args.index is not None and args.index.exists():
        tg = ThinkGraph.open(args.index)
    else:
        tg = ThinkGraph(args.index or Path(tempfile.mkdtemp(prefix="tg-a2rag-")) / "musique.db")
        tg.index([args.data / "corpus.jsonl"], openie=args.data / "openie_gpt35.jsonl")
    with tg:
        full = build_entity_graph(tg.view)
        dense = DenseRetriever(tg.view)
        dense_lists = [[p.doc_id for p in dense.retrieve(q["question"], 10).passages] for q in questions]
        ppr_lists = [[c.doc_id for c in tg.retrieve(q["question"], "ppr", top_k=10).citations] for q in questions]
        print(f"{len(questions)} questions, entity graph {len(full.ids)} nodes / {len(full.facts)} facts")
        print("retriever | R@2 | R@5 | R@10")
        print(row("dense passage retrieval", dense_lists, golds))
        print(row("ppr", ppr_lists, golds))
        for form in (f for f in args.forms.split(",") if f):
            config = A2RAGConfig.model_validate({"sufficiency": "all", "stage3": form})
            ranked, ms = run_form(tg, questions, config)
            for stage, label in zip(STAGES, ("stage 1 (local)", "+ stage 2 (bridge)", "+ stage 3"), strict=True):
                print(row(f"a2rag stage3={form}, after {label}", ranked[stage], golds))
            print(f"(stage3={form}: median {ms:.1f} ms/question, all stages)")
        fractions = [float(f) for f in args.fractions.split(",") if f.strip()]
        if fractions:
            loss_table(tg, questions, golds, full, fractions, args.seeds, recalls(dense_lists, golds)[1])


if __name__ == "__main__":
    main()
