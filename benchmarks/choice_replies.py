"""How often the reader's choice check (methods/choice.py) reads the reasoning of replies to questions that
offer "..., A or B?", without a model: every distinct cached answer reply in the given indexes' LLM caches
that names both options of such a question is read as the reader reads it, and counted as: the reasoning
picks the option the answer names ("agrees"), picks the other one (the check asks again: "contradicts"),
or picks none ("not read").

    .venv/bin/python benchmarks/choice_replies.py --data ../shared/data bench-out/*/*/index.db

(A cache holds replies, not prompts: a reply is matched to the first question whose two options it names.)
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import Counter
from pathlib import Path

from thinkgraph.methods import answer_shape, choice, replies


def option_questions(data: Path) -> list[tuple[str, tuple[str, str]]]:
    """Every dev question (any dataset under ``data``) that offers two options, with them."""
    found: list[tuple[str, tuple[str, str]]] = []
    for path in sorted(data.glob("*/questions*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            question = json.loads(line).get("question") if line.strip() else None
            offered = answer_shape.offered_options(question) if isinstance(question, str) else None
            if isinstance(question, str) and offered is not None:
                found.append((question, offered[1]))
    return found


def cached_replies(index: Path) -> list[str]:
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT value FROM llm_cache").fetchall()
    texts = []
    for (value,) in rows:
        try:
            text = json.loads(value)
        except json.JSONDecodeError:
            continue
        if isinstance(text, str) and "answer" in text.casefold():
            texts.append(text)
    return texts


def classify(reply: str, question: str) -> str:
    answer, reasoning = replies.answer_part(reply)
    short = answer_shape.short_answer(replies.without_markers(answer), question)
    if choice.contradicted_choice(short, reasoning, question) is not None:
        return "contradicts"
    return "agrees" if choice.reasoned_option(reasoning or "", question) is not None else "not read"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the folder with <dataset>/questions*.jsonl")
    parser.add_argument("indexes", type=Path, nargs="+", help="index.db files whose LLM caches to read")
    args = parser.parse_args()
    questions = option_questions(args.data)
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    for index in args.indexes:
        for reply in cached_replies(index):
            if reply in seen:
                continue
            folded = reply.casefold()
            match = next((q for q, options in questions if all(o.casefold() in folded for o in options)), None)
            if match is None:
                continue
            seen.add(reply)
            kind = classify(reply, match)
            counts[kind] += 1
            if kind == "contradicts":
                print(f"contradicts: {match} | {' '.join(reply.split())[:160]}")
    print(f"{len(questions)} questions offer two options; {len(seen)} distinct cached replies name both options "
          f"of one: {counts['agrees']} agree with their reasoning, {counts['contradicts']} contradict it "
          f"(asked again), {counts['not read']} not read")


if __name__ == "__main__":
    main()
