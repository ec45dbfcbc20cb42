"""Sweep `ppr` retrieval settings on a dev set and print Recall@2/5/10 for every combination, best
R@5 first. Settings are chosen on dev from such a sweep only when the reason is stated in
`config.py`; the figures here are on the dev questions and are optimistic for unseen ones.

    python benchmarks/retrieval_sweep.py --index musique.db \
        --questions ../shared/data/musique/questions_dev.jsonl \
        --grid damping=0.3,0.5,0.7 --grid passage_weight=0.02,0.05,0.1
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from retrieval_common import load_questions  # noqa: E402

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import load_settings  # noqa: E402
from thinkgraph.eval.metrics import recall_at_k  # noqa: E402
from thinkgraph.retrieval.graph import GraphRetriever  # noqa: E402


def parse_grid(items: list[str]) -> dict[str, list[Any]]:
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, _, values = item.partition("=")
        grid[key.strip()] = [json.loads(v) if v not in ("true", "false") else v == "true" for v in values.split(",")]
    return grid


def recalls(retriever: GraphRetriever, questions: list[dict[str, Any]]) -> tuple[float, float, float]:
    out: dict[int, list[float]] = {2: [], 5: [], 10: []}
    for q in questions:
        ranked = [p.doc_id for p in retriever.retrieve(q["question"], 10).passages]
        for k in out:
            out[k].append(recall_at_k(ranked, q["supporting_ids"], k))
    r2, r5, r10 = (100 * statistics.mean(out[k]) for k in (2, 5, 10))
    return r2, r5, r10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--grid", action="append", default=[], help="KEY=V1,V2,... over RetrievalSettings")
    parser.add_argument("--set", action="append", default=[], help="KEY=VALUE fixed for every run")
    parser.add_argument("--config", type=Path, help="thinkgraph.toml of the index (e.g. its embedding model)")
    args = parser.parse_args()
    questions = load_questions(args.questions)
    grid = parse_grid(args.grid)
    fixed = {k: v[0] for k, v in parse_grid(args.set).items()}
    settings = load_settings(args.config)
    rows = []
    with ThinkGraph(args.index, settings=settings) as tg:
        for combo in itertools.product(*grid.values()):
            update = fixed | dict(zip(grid, combo, strict=True))
            variant = settings.retrieval.model_copy(update=update)
            rows.append((update, *recalls(GraphRetriever(tg.view, variant), questions)))
            r2, r5, r10 = rows[-1][1:]
            print(" ".join(f"{k}={v}" for k, v in update.items()), f"| R@2 {r2:.1f} | R@5 {r5:.1f} | R@10 {r10:.1f}",
                  flush=True)
    print(f"\n{len(questions)} questions, best R@5 first\n\n| settings | R@2 | R@5 | R@10 |\n|---|---|---|---|")
    for update, r2, r5, r10 in sorted(rows, key=lambda r: (-r[2], -r[1])):
        print(f"| {' '.join(f'{k}={v}' for k, v in update.items()) or 'defaults'} | {r2:.1f} | {r5:.1f} | {r10:.1f} |")


if __name__ == "__main__":
    main()
