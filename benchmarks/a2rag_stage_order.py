"""LLM-free: how a2rag's stages 1-2 order their own chunks (`[a2rag] stage_chunk_order`), read as the gold
recall of the five chunks a stage's draft would be shown, stage by stage, on the dev questions.

    python benchmarks/a2rag_stage_order.py --data ../shared/data --musique-index musique.db \
        --hotpot-index hotpot.db --questions 100

Each question runs the stages with a judge that finds every stage insufficient (no LLM, so no draft and
no reached names: every stage runs once). For each stage's chunk set it prints Recall@5 of the gold
passages under "text" (the default), "cosine" and, for comparison, "seeds first" (the chunks naming more
of the seeds first, then by the text score; a form tried and dropped, computed here from the stage's own
set). A question whose stage found no chunk is left out of that stage's row.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.eval.datasets import load_questions  # noqa: E402
from thinkgraph.methods.a2rag import A2RAGConfig, AgenticRetriever  # noqa: E402
from thinkgraph.methods.a2rag.retriever import RetrievalState  # noqa: E402

STAGES = ("local", "bridge")


async def never_sufficient(state: RetrievalState) -> bool:
    return False


def seeds_first(retriever: AgenticRetriever, state: RetrievalState, ranked: list[str]) -> list[str]:
    """The text order re-sorted by how many of the seeds each chunk names (a stable sort keeps the rest)."""
    seeds = {retriever.graph.ids[row] for row in state.seeds.entities}
    named = {c: len(seeds.intersection(retriever.view.passage_entities.entities(c))) for c in ranked}
    return sorted(ranked, key=lambda c: -named[c])


def recall(tg: ThinkGraph, chunks: list[str], gold: set[str]) -> float:
    docs = {tg.store.get_node(c).props.get("doc_id") for c in chunks[:5]}
    return len(gold & docs) / len(gold)


def measure(index: Path, questions_file: Path, limit: int) -> dict[tuple[str, str], list[float]]:
    out: dict[tuple[str, str], list[float]] = {}
    with ThinkGraph(index) as tg:
        text = AgenticRetriever(tg.view, A2RAGConfig())
        cosine = AgenticRetriever(tg.view, A2RAGConfig(stage_chunk_order="cosine"))
        for q in load_questions(questions_file, limit=limit):
            gold = set(q.supporting_ids)
            by_text = asyncio.run(text.retrieve(q.question, judge=never_sufficient))
            by_cosine = asyncio.run(cosine.retrieve(q.question, judge=never_sufficient))
            for stage in STAGES:
                ranked = by_text.stage_chunks.get(stage) or []
                if not ranked or not gold:
                    continue
                out.setdefault((stage, "text"), []).append(recall(tg, ranked, gold))
                out.setdefault((stage, "cosine"), []).append(recall(tg, by_cosine.stage_chunks[stage], gold))
                out.setdefault((stage, "seeds first"), []).append(recall(tg, seeds_first(text, by_text, ranked), gold))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--musique-index", type=Path, required=True)
    parser.add_argument("--hotpot-index", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args()
    print("| dataset | stage | order | questions | Recall@5 of the stage's chunks |")
    print("|---|---|---|---|---|")
    for name, index in (("MuSiQue", args.musique_index), ("HotpotQA", args.hotpot_index)):
        folder = "musique" if name == "MuSiQue" else "hotpotqa"
        rows = measure(index, args.data / folder / "questions_dev.jsonl", args.questions)
        for (stage, order), values in sorted(rows.items()):
            print(f"| {name} | {stage} | {order} | {len(values)} | {100 * sum(values) / len(values):.1f} |")


if __name__ == "__main__":
    main()
