"""Do ToPG's LLM decisions reach the passages it returns? Each question is asked twice: without an LLM
(every Select keeps every suggestion) and with a scripted model that keeps each suggested fact with
probability 1/2 in Select (seeded by the prompt, so a rerun replays it), never answers in Eval and
asks nothing new in NextQ. Prints the questions whose returned passages (the first --depth) differ,
and Recall@2/5/10 of both.

    nice -n 10 .venv/bin/python benchmarks/topg_select_reach.py --index musique.db \\
        --questions ../shared/data/musique/questions_dev.jsonl [-o entry=ppr_passages]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import statistics
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.eval.runner import retrieved_documents  # noqa: E402
from thinkgraph.llm.backend import ChatRequest  # noqa: E402
from thinkgraph.testing import ScriptedBackend  # noqa: E402


def random_select(seed: int):  # noqa: ANN201
    """A Select that keeps each numbered fact with probability 1/2, the same for the same prompt."""
    def reply(request: ChatRequest) -> str:
        prompt = request.messages[0]["content"]
        rng = random.Random(int.from_bytes(hashlib.sha256(f"{seed}:{prompt}".encode()).digest()[:8], "big"))
        count = sum(1 for line in prompt.split("Facts:", 1)[1].splitlines() if line.startswith("["))
        return json.dumps({"keep": [n for n in range(1, count + 1) if rng.random() < 0.5]})
    return reply


def recall(docs: list[str], gold: list[str], k: int) -> float:
    return len(set(docs[:k]) & set(gold)) / len(gold) if gold else 0.0


def option(text: str) -> tuple[str, Any]:
    key, _, value = text.partition("=")
    for kind in (int, float):
        try:
            return key, kind(value)
        except ValueError:
            continue
    return key, {"true": True, "false": False}.get(value, value)


async def run(args: argparse.Namespace) -> None:
    questions = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    options = {"k": args.depth, **dict(option(o) for o in args.option)}
    backend = ScriptedBackend(rules=[("Keep only the facts", random_select(args.seed)),
                                     ("Can the question be answered", '{"answerable": false}'),
                                     ("targeted sub-questions", '{"questions": []}')])
    rows: dict[str, list[list[str]]] = {"no LLM": [], "random Select": []}
    with ThinkGraph.open(args.index) as free, ThinkGraph.open(args.index, backend=backend) as scripted:
        for q in questions:
            for label, tg in (("no LLM", free), ("random Select", scripted)):
                answer = await tg.aask(q["question"], method="topg", **options)
                rows[label].append(retrieved_documents(answer)[: args.depth])
    golds = [q.get("supporting_ids", []) for q in questions]
    same = sum(a == b for a, b in zip(rows["no LLM"], rows["random Select"], strict=True))
    print(f"topg {options}: {len(questions) - same} of {len(questions)} questions return other passages "
          f"(first {args.depth}) with the random Select than without an LLM")
    print("run | R@2 | R@5 | R@10")
    for label, lists in rows.items():
        cells = [100 * statistics.mean(recall(d, g, k) for d, g in zip(lists, golds, strict=True)) for k in (2, 5, 10)]
        print(f"{label} | " + " | ".join(f"{c:.1f}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--depth", type=int, default=10, help="k, and the passages compared")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--option", action="append", default=[], help="topg option key=value (repeat)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
