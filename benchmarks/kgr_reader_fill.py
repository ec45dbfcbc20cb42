"""What kgr's reader reads under each ``reader_fill`` (walk, relations, none), without a model: kgr's chains
are replayed from the LLM cache of an index that an `answer_quality.py run` of kgr filled (every call
cached, so no server is asked; a question whose calls are not all cached is skipped and counted), the
nodes each chain reached are taken as the reader takes them, and the gold passages among the reader's
passages are counted for every fill, beside `ppr`'s top 5 from that run's records. It also counts the
questions on which a fill's passages are `ppr`'s five (as documents), which would make kgr `ppr`.

    THINKGRAPH_LLM_LOGPROBS=true .venv/bin/python benchmarks/kgr_reader_fill.py \\
        --index bench-out/answer_quality/musique/index.db --records bench-out/answer_quality/musique/records.jsonl \\
        --questions ../shared/data/musique/questions_dev.jsonl -n 20

(THINKGRAPH_LLM_LOGPROBS as in the run whose cache is replayed: it is part of each call's cache key.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from answer_quality import settings as run_settings  # noqa: E402

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.errors import ThinkgraphError  # noqa: E402
from thinkgraph.eval.datasets import load_questions  # noqa: E402
from thinkgraph.methods.kgr import reading  # noqa: E402
from thinkgraph.methods.kgr.fill import walk_fill  # noqa: E402
from thinkgraph.methods.kgr.grounding import grounding_passages  # noqa: E402

FILLS = ("walk", "relations", "none")
DEAD_SERVER = "http://127.0.0.1:9/v1"  # every call must come from the cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--records", type=Path, required=True, help="the run's records.jsonl, with ppr's")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("-n", type=int, default=20)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="the run's model name")
    args = parser.parse_args()
    if not args.index.is_file():
        parser.error(f"no index at {args.index}")
    ppr = {r["qid"]: r["retrieved"][:5] for r in map(json.loads, args.records.open()) if r["label"] == "ppr"}
    reached: dict[str, Any] = {}
    real = reading.grounding_passages

    def capture(graph: Any, nodes: Any, limit: int, **kwargs: Any) -> list[str]:
        reached.update(graph=graph, nodes=nodes, relevance=kwargs.get("relevance"))
        return real(graph, nodes, limit, **kwargs)

    reading.grounding_passages = capture  # type: ignore[assignment]  # the chain's nodes, as the reader gets them
    rows: dict[str, list[tuple[float, bool]]] = {f: [] for f in (*FILLS, "ppr")}
    skipped = 0
    with ThinkGraph(args.index, settings=run_settings(DEAD_SERVER, args.model)) as tg:
        store, view, retrieval = tg.store, tg.view, tg.settings.retrieval
        for q in load_questions(args.questions)[: args.n]:
            reached.clear()
            try:
                tg.ask(q.question, "kgr")
            except ThinkgraphError:
                skipped += 1
                continue
            if "graph" not in reached:  # the chain reached no passage: nothing is read
                continue
            gold, top = set(q.supporting_ids), ppr.get(q.id, [])
            graph, nodes = reached["graph"], reached["nodes"]
            walk = walk_fill(view, retrieval, graph, q.question, view.embed_query(q.question), 10)
            shown = {"walk": grounding_passages(graph, nodes, 5, fill=walk),
                     "relations": grounding_passages(graph, nodes, 5, relevance=reached["relevance"],
                                                     neighbourhood=True),
                     "none": grounding_passages(graph, nodes, 5)}
            for fill, ids in shown.items():
                docs = [str(store.get_node(c).props.get("doc_id")) for c in ids]
                rows[fill].append((len(gold & set(docs)) / len(gold), set(docs) == set(top)))
            rows["ppr"].append((len(gold & set(top)) / len(gold), True))
    print(f"{len(rows['ppr'])} questions read ({skipped} skipped: a call not in the cache)")
    print("| reader's passages | gold passages among them, % | the same five as ppr's |\n|---|---|---|")
    for fill, got in rows.items():
        if got:
            print(f"| {fill} | {100 * statistics.mean(r for r, _ in got):.1f} | {sum(s for _, s in got)} |")


if __name__ == "__main__":
    main()
