"""What topg's first Select keeps, by its form (``[topg] select_form``): on the first N dev questions,
SuggestNaive's k propositions are shown to a real model once per form, and the gold passages among the
kept facts' passages are counted, beside those of Suggest's first ``select_max`` (what a Select that lists
every fact keeps under the bound) and of all k. One Select call a question and form; no walk, no answer.

    bash scripts/local_model.sh qwen-1.5b --serve --server llama-server --port 8001 &
    .venv/bin/python benchmarks/topg_select_forms.py --index bench-out/answer_quality/hotpotqa/index.db \\
        --questions ../shared/data/hotpotqa/questions_dev.jsonl --base-url http://127.0.0.1:8001/v1 -n 20

The index is one `benchmarks/answer_quality.py run` built (its default --out); an unusable reply counts as
the method takes it, every suggestion kept (its fallback), and is counted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Literal

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.errors import StructuredOutputError  # noqa: E402
from thinkgraph.eval.datasets import Question, load_questions  # noqa: E402
from thinkgraph.methods.topg.config import ToPGConfig  # noqa: E402
from thinkgraph.methods.topg.graph import proposition_graph  # noqa: E402
from thinkgraph.methods.topg.select import select_request  # noqa: E402
from thinkgraph.methods.topg.suggest import Suggester  # noqa: E402
from thinkgraph.models import NodeType  # noqa: E402

FORMS: tuple[Literal["list", "reasoned"], ...] = ("list", "reasoned")


async def measure(tg: ThinkGraph, questions: list[Question], most: int) -> None:
    view, llm = tg.view, tg.llm
    assert llm is not None
    graph = proposition_graph(view)
    suggester = Suggester(graph, ToPGConfig())
    doc_of = {n.id: n.props.get("doc_id") for n in view.store.iter_nodes(NodeType.CHUNK)}
    totals: dict[str, int] = {"first": 0, "all": 0, **{f: 0 for f in FORMS}}
    kept_counts: dict[str, list[int]] = {f: [] for f in FORMS}
    fallbacks = {f: 0 for f in FORMS}
    gold_total = 0
    print(f"| question | gold | all k | Suggest's first {most} | " + " | ".join(FORMS) + " |")
    print("|---|---|---|---|" + "---|" * len(FORMS))
    for q in questions:
        props = suggester.naive(view.embed_query(q.question), ToPGConfig().k)
        facts = "\n".join(f"[{i}] {graph.texts[p]}" for i, p in enumerate(props, 1))
        gold = set(q.supporting_ids)

        def hits(numbers: list[int], props: list[int] = props, gold: set[str] = gold) -> int:
            return len({doc_of[c] for n in numbers for c in graph.passages[props[n - 1]]} & gold)

        row = {"all": hits(list(range(1, len(props) + 1))), "first": hits(list(range(1, min(most, len(props)) + 1)))}
        for form in FORMS:
            request = select_request(form, q.question, facts, suggested=len(props), most=most)
            try:
                reply = await llm.json(request.messages, request.reply, step="topg.select", kind="verdict")
                listed = [n for n in dict.fromkeys(reply.keep) if 1 <= n <= len(props)][: request.bound]
            except StructuredOutputError:  # the method keeps every suggestion then
                fallbacks[form] += 1
                listed = list(range(1, len(props) + 1))
            row[form] = hits(listed)
            kept_counts[form].append(len(listed))
        for key, value in row.items():
            totals[key] += value
        gold_total += len(gold)
        print(f"| {q.question[:60]} | {len(gold)} | {row['all']} | {row['first']} | "
              + " | ".join(str(row[f]) for f in FORMS) + " |", flush=True)
    print(f"| all {len(questions)} | {gold_total} | {totals['all']} | {totals['first']} | "
          + " | ".join(str(totals[f]) for f in FORMS) + " |")
    for form in FORMS:
        counts = kept_counts[form]
        print(f"{form}: {sum(counts) / max(len(counts), 1):.1f} facts kept a question, "
              f"{fallbacks[form]} unusable replies (every suggestion kept)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("-n", type=int, default=20)
    parser.add_argument("--base-url", default="http://127.0.0.1:8001/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    args = parser.parse_args()
    settings = Settings()
    settings.llm.base_url, settings.llm.model = args.base_url, args.model
    with ThinkGraph.open(args.index, settings=settings) as tg:
        asyncio.run(measure(tg, load_questions(args.questions, limit=args.n), ToPGConfig().select_max or 5))


if __name__ == "__main__":
    main()
