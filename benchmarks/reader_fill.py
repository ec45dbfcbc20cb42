"""What a method's reader reads under each ``reader_fill``, without a model (kgr: walk, relations, none;
topg: walk, none): the method's own steps (kgr's chain; topg's Suggestion–Selection, Eval and reading
order) are replayed from the LLM cache of an index that an `answer_quality.py run` of the method filled
(every call cached, so no server is asked; a question whose calls are not all cached is skipped and
counted), what the reader is given is captured, and the gold passages among the reader's passages are
counted for every fill, beside `ppr`'s top 5 from that run's records. It also counts the questions on
which a fill's passages are `ppr`'s five (as documents), which would make the method `ppr`.

    THINKGRAPH_LLM_LOGPROBS=true .venv/bin/python benchmarks/reader_fill.py --method kgr \\
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from answer_quality import settings as run_settings  # noqa: E402

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.errors import ThinkgraphError  # noqa: E402
from thinkgraph.eval.datasets import load_questions  # noqa: E402
from thinkgraph.methods.kgr import reading as kgr_reading  # noqa: E402
from thinkgraph.methods.kgr.fill import walk_fill  # noqa: E402
from thinkgraph.methods.kgr.grounding import grounding_passages  # noqa: E402
from thinkgraph.methods.topg import reading as topg_reading  # noqa: E402
from thinkgraph.methods.topg.fill import WalkFill  # noqa: E402

DEAD_SERVER = "http://127.0.0.1:9/v1"  # every call must come from the cache
READER_PASSAGES = 5


class Captured(Exception):
    """Raised once what the reader is given is captured: the reader's own call (whose prompt depends on
    the fill) is not made."""


Shown = Callable[[ThinkGraph, str], dict[str, list[str]]]  # (tg, question) -> fill -> the reader's passages


def kgr_fills(reached: dict[str, Any]) -> Shown:
    """kgr's reader, given the nodes the chain reached (captured from the reader's grounding call)."""
    def capture(graph: Any, nodes: Any, limit: int, **kwargs: Any) -> list[str]:
        reached.update(graph=graph, nodes=nodes, relevance=kwargs.get("relevance"))
        raise Captured

    kgr_reading.grounding_passages = capture  # type: ignore[assignment]  # the chain's nodes, as the reader gets them

    def shown(tg: ThinkGraph, question: str) -> dict[str, list[str]]:
        graph, nodes = reached["graph"], reached["nodes"]
        walk = walk_fill(tg.view, tg.settings.retrieval, graph, question, tg.view.embed_query(question), 10)
        return {"walk": grounding_passages(graph, nodes, READER_PASSAGES, fill=walk),
                "relations": grounding_passages(graph, nodes, READER_PASSAGES, relevance=reached["relevance"],
                                                neighbourhood=True),
                "none": grounding_passages(graph, nodes, READER_PASSAGES)}
    return shown


def topg_fills(reached: dict[str, Any]) -> Shown:
    """topg's reader, given the facts in its order (captured from the reader's answer call)."""
    async def capture(self: topg_reading.FactReader, *args: Any, **kwargs: Any) -> Any:
        reached.update(reader=self, facts=list(args[2]), rounds=kwargs.get("rounds", args[4] if len(args) > 4 else ()))
        raise Captured

    topg_reading.FactReader.answer = capture  # type: ignore[method-assign]

    def shown(tg: ThinkGraph, question: str) -> dict[str, list[str]]:
        reader, facts, rounds = reached["reader"], reached["facts"], reached["rounds"]
        fill = WalkFill(tg.view, tg.settings.retrieval, reader.suggester.graph, tg.view.embed_query)
        walk = topg_reading.FactReader(reader.suggester, reader.store, reader.threshold, READER_PASSAGES,
                                       reader.noted, fill, reader.fill_passages)
        none = topg_reading.FactReader(reader.suggester, reader.store, reader.threshold, READER_PASSAGES,
                                       reader.noted)
        return {"walk": walk.passage_ids(question, facts, rounds)[0],
                "none": none.passage_ids(question, facts, rounds)[0]}
    return shown


FILLS: dict[str, Callable[[dict[str, Any]], Shown]] = {"kgr": kgr_fills, "topg": topg_fills}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", choices=sorted(FILLS), required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--records", type=Path, required=True, help="the run's records.jsonl, with ppr's")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("-n", type=int, default=20)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="the run's model name")
    args = parser.parse_args()
    if not args.index.is_file():
        parser.error(f"no index at {args.index}")
    for given in (args.records, args.questions):
        if not given.is_file():
            parser.error(f"no file at {given}")
    ppr = {r["qid"]: r["retrieved"][:5] for r in map(json.loads, args.records.open()) if r["label"] == "ppr"}
    reached: dict[str, Any] = {}
    shown_by_fill = FILLS[args.method](reached)
    rows: dict[str, list[tuple[float, bool]]] = {}
    skipped = 0
    settings = run_settings(DEAD_SERVER, args.model)
    settings.llm.max_retries = 0  # a call the cache lacks skips its question at once
    with ThinkGraph(args.index, settings=settings) as tg:
        for q in load_questions(args.questions)[: args.n]:
            reached.clear()
            try:
                tg.ask(q.question, args.method)
            except Captured:
                pass
            except ThinkgraphError:
                skipped += 1
                continue
            if not reached:  # the reader read nothing of the method's (no passage reached)
                continue
            gold, top = set(q.supporting_ids), ppr.get(q.id, [])
            for fill, ids in shown_by_fill(tg, q.question).items():
                docs = [str(tg.store.get_node(c).props.get("doc_id")) for c in ids]
                rows.setdefault(fill, []).append((len(gold & set(docs)) / len(gold), set(docs) == set(top)))
            rows.setdefault("ppr", []).append((len(gold & set(top)) / len(gold), True))
    print(f"{len(rows.get('ppr', []))} questions read ({skipped} skipped: a call not in the cache)")
    print("| reader's passages | gold passages among them, % | the same five as ppr's |\n|---|---|---|")
    for fill, got in rows.items():
        print(f"| {fill} | {100 * statistics.mean(r for r, _ in got):.1f} | {sum(s for _, s in got)} |")


if __name__ == "__main__":
    main()
