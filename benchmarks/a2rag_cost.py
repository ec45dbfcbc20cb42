"""A2RAG's calls and tokens per question beside IRCoT's on the same questions (A2RAG Tables II-III), with
a scripted model that follows every format and reads its prompts: it answers when a passage it is
shown holds the gold answer (else "Unknown") and verifies what the evidence states. For IRCoT it
reasons as chain-of-thought does, one sentence per hop of the question (naming the hop's gold
passage, or MuSiQue's intermediate answer, so that IRCoT's next retrieval finds it), then states the
answer once a passage it was shown holds it (hops + 1 calls), or reasons on to its step limit; IRCoT
QA's reader then answers from every paragraph collected (one call more; `ircot reader=cot`, the chain's
own answer, is shown beside it). So the figures are the methods' cost structure on real passages, not a
model's quality; a real model's figures are in docs/benchmarks.md (benchmarks/real_model.py).

    python benchmarks/a2rag_cost.py --musique-index musique.db --hotpot-index hotpot_spacy.db
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.llm.backend import ChatRequest  # noqa: E402
from thinkgraph.testing import ScriptedBackend  # noqa: E402

# a2rag beside IRCoT as published (IRCoT QA: the chain, then its reader) and without the reader
# (and a2rag's previous default, kept as switches: the shared walk orders the evidence and is stage 3, and a
# stage is drafted only when it shows the walk's best 5)
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "a2rag": ("a2rag", {}), "ircot": ("ircot", {}), "ircot reader=cot": ("ircot", {"reader": "cot"}),
    "a2rag walk form": ("a2rag", {"stage3": "shared_walk", "evidence_order": "shared_walk",
                                  "sufficiency_precheck": 5})}


class FormatFollower:
    """Replies per prompt kind for the question being asked (``question`` is set before each ask)."""

    def __init__(self, titles: dict[str, str]) -> None:
        self.titles = titles  # corpus id -> title
        self.question: dict[str, Any] = {}
        self.backend = ScriptedBackend(rules=[
            ("Answer the question using only the evidence below", self.draft),
            ("Check the answer below", self.check), ("Reply with the rewritten question only", self.rewrite),
            ("Write only the\nNEXT sentence", self.reason),
            ("Answer the question using only the numbered passages below", self.draft)])  # IRCoT's reader

    def _golds(self) -> list[str]:
        q = self.question
        return [g.casefold() for g in [q["answer"], *q.get("answer_aliases", [])] if g]

    def _numbered_with_answer(self, text: str) -> str | None:
        for number, passage in re.findall(r"^\[(\d+)\] (.*)$", text, flags=re.MULTILINE):
            if any(g in passage.casefold() for g in self._golds()):
                return number
        return None

    def draft(self, request: ChatRequest) -> str:
        number = self._numbered_with_answer(request.messages[0]["content"])
        return f"{self.question['answer']} [{number}]" if number else "Unknown"

    def check(self, request: ChatRequest) -> str:
        prompt = request.messages[0]["content"]
        answer = prompt.split("Answer:", 1)[1].split("\n", 1)[0].strip()
        ok = answer != "Unknown"
        return json.dumps({"relevant": True, "grounded": ok, "resolves": ok, "reason": "ok" if ok else "unknown"})

    def rewrite(self, request: ChatRequest) -> str:
        return str(self.question["question"])

    def reason(self, request: ChatRequest) -> str:
        prompt = request.messages[0]["content"]
        written = prompt.split("Reasoning so far:", 1)[1].split("Next sentence:", 1)[0].strip()
        done = 0 if written == "(none)" else written.count(". ") + 1
        hops = self._hops()
        passages = prompt.split("Passages:", 1)[1].split("Question:", 1)[0].casefold()
        if done >= len(hops) and any(g in passages for g in self._golds()):
            return f"So the answer is: {self.question['answer']}."
        return f"The next fact concerns {hops[min(done, len(hops) - 1)]}."  # until its step limit

    def _hops(self) -> list[str]:
        """What each hop's sentence names: MuSiQue's intermediate answers, else the gold passages' titles."""
        steps = self.question.get("decomposition") or []
        if steps:
            return [str(step["answer"]) for step in steps]
        return [self.titles[s] for s in self.question.get("supporting_ids", [])]


STAGE_COUNTS: dict[str, Counter[str]] = {}  # method label -> where its questions ended (A2RAG Fig. 4)


def run(index: Path, questions_file: Path, corpus: Path, limit: int | None) -> dict[str, dict[str, float]]:
    questions = [json.loads(x) for x in questions_file.read_text(encoding="utf-8").splitlines() if x.strip()]
    titles = {d["id"]: d["title"] for d in map(json.loads, corpus.read_text(encoding="utf-8").splitlines()) if d}
    model = FormatFollower(titles)
    out: dict[str, dict[str, list[float]]] = {}
    for label, (method, options) in METHODS.items():
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / index.name  # a fresh LLM cache per method: every call is made and counted
            with sqlite3.connect(index) as source, sqlite3.connect(copy) as target:
                source.backup(target)
                target.execute("DELETE FROM llm_cache")
            STAGE_COUNTS[label] = Counter()
            out[label] = _ask_all(copy, questions[:limit], model, method, options, STAGE_COUNTS[label])
    return {m: {k: statistics.mean(v) for k, v in f.items()} for m, f in out.items()}


def _ask_all(index: Path, questions: list[dict[str, Any]], model: FormatFollower, method: str,
             options: dict[str, Any], stages: Counter[str]) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"calls": [], "tokens": [], "answered": []}
    with ThinkGraph(index, settings=Settings(), backend=model.backend) as tg:
        for q in questions:
            model.question = q
            answer = asyncio.run(tg.aask(q["question"], method, **options))
            figures["calls"].append(answer.cost.calls)
            figures["tokens"].append(answer.cost.total_tokens)
            figures["answered"].append(float(answer.status == "answered"))
            if "stage" in answer.stats:
                stages[str(answer.stats["stage"])] += 1
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--musique-index", type=Path)
    parser.add_argument("--hotpot-index", type=Path)
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    print("| set | method | calls / question | tokens / question | answered (%) |")
    print("|---|---|---|---|---|")
    for name, index, folder in (("MuSiQue dev", args.musique_index, "musique"),
                                ("HotpotQA dev", args.hotpot_index, "hotpotqa")):
        if index is None:
            continue
        data = args.data / folder
        result = run(index, data / "questions_dev.jsonl", data / "corpus.jsonl", args.limit)
        for method, f in result.items():
            print(f"| {name} | {method} | {f['calls']:.2f} | {f['tokens']:.0f} | {100 * f['answered']:.0f} |")
        a2rag = result["a2rag"]
        for label in ("ircot", "ircot reader=cot"):
            other = result[label]
            print(f"| {name} | a2rag / {label} | {a2rag['calls'] / other['calls']:.2f} | "
                  f"{a2rag['tokens'] / other['tokens']:.2f} | |")
        for label, counts in STAGE_COUNTS.items():
            if counts:
                print(f"| {name} | {label}: where questions ended | "
                      + ", ".join(f"{stage} {n}" for stage, n in sorted(counts.items())) + " | | |")


if __name__ == "__main__":
    main()
