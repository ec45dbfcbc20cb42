"""Shared by the retrieval benchmarks: run a method LLM-free over dev questions through the public
API (as `thinkgraph eval --retrieval-only` does) and print Recall@k and latency tables."""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thinkgraph.api import ThinkGraph
from thinkgraph.eval.metrics import recall_at_k
from thinkgraph.eval.runner import retrieval_options

DEPTH = 10  # passages asked of every retriever: enough for Recall@10


@dataclass
class Row:
    label: str
    r2: float
    r5: float
    r10: float
    ms: float
    tops: tuple[frozenset[str], ...] = ()  # each question's top 5 documents (compared with ppr's)


def load_questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def method_options(method: str, options: dict[str, Any]) -> dict[str, Any]:
    return retrieval_options(method, options, DEPTH)  # as eval --retrieval-only


def warm_queries(tg: ThinkGraph, questions: list[dict[str, Any]]) -> None:
    """Embed every question once, one at a time, so that the embedder's query cache holds them and
    the timed passes measure retrieval, not the encoder (the same for every method)."""
    for q in questions:
        tg.embedder.embed([q["question"]])


def evaluate(tg: ThinkGraph, label: str, method: str, options: dict[str, Any], questions: list[dict[str, Any]],
             repeats: int) -> Row:
    """Recall@2/5/10 of gold passages (first pass) and the median over passes of ms per question.
    One untimed question first builds what the method builds once per index (BM25, graphs)."""
    opts = method_options(method, options)
    recalls: dict[int, list[float]] = {2: [], 5: [], 10: []}
    tops: list[frozenset[str]] = []
    per_pass: list[float] = []

    async def run_pass(first: bool) -> None:
        for q in questions:
            answer = await tg.aretrieve(q["question"], method, **opts)
            if first:
                ranked = list(dict.fromkeys(c.doc_id for c in answer.citations))
                tops.append(frozenset(ranked[:5]))
                for k in recalls:
                    recalls[k].append(recall_at_k(ranked, q["supporting_ids"], k))

    asyncio.run(tg.aretrieve(questions[0]["question"], method, **opts))
    for r in range(max(repeats, 1)):
        started = time.perf_counter()
        asyncio.run(run_pass(first=r == 0))
        per_pass.append(1000 * (time.perf_counter() - started) / len(questions))
    return Row(label, *(100 * statistics.mean(recalls[k]) for k in (2, 5, 10)), statistics.median(per_pass),
               tuple(tops))


def same_top5(row: Row, baseline: Row) -> float:
    """The share of questions (%) on which ``row``'s top 5 documents are ``baseline``'s (as sets)."""
    pairs = list(zip(row.tops, baseline.tops, strict=True))
    return 100 * sum(a == b for a, b in pairs) / len(pairs) if pairs else 0.0


def paired_ratio(tg: ThinkGraph, method: str, options: dict[str, Any], baseline: str,
                 questions: list[dict[str, Any]], repeats: int) -> float:
    """``method``'s time over ``baseline``'s on the same questions, asked alternately in one process
    (each question by both, one after the other, after one untimed question each), so that whatever
    else the machine does weighs on both alike: the median over passes of the ratio of the pass totals."""
    opts, base_opts = method_options(method, options), method_options(baseline, {})
    for name, o in ((method, opts), (baseline, base_opts)):
        asyncio.run(tg.aretrieve(questions[0]["question"], name, **o))
    ratios = []
    for _ in range(max(repeats, 1)):
        totals = {method: 0.0, baseline: 0.0}
        for q in questions:
            for name, o in ((method, opts), (baseline, base_opts)):
                started = time.perf_counter()
                asyncio.run(tg.aretrieve(q["question"], name, **o))
                totals[name] += time.perf_counter() - started
        ratios.append(totals[method] / totals[baseline])
    return statistics.median(ratios)


def print_table(title: str, rows: list[Row], baseline: Row) -> None:
    print(f"\n{title}\n")
    print("| method | R@2 | R@5 | R@10 | ms/query | R@5 vs dense |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        delta = row.r5 - baseline.r5
        print(f"| {row.label} | {row.r2:.1f} | {row.r5:.1f} | {row.r10:.1f} | {row.ms:.1f} | {delta:+.1f} |")
