"""How often the reader's choice check (methods/choice.py) reads the reasoning of replies to questions that
offer "..., A or B?", without a model: every distinct cached answer reply in the given indexes' LLM caches
that names both options of such a question is read as the reader reads it, and counted as: its answer
names no one option; the reasoning picks the option the answer names ("agree"); it picks the other one
(the check asks again: "contradict"); or it picks none ("not read").

    .venv/bin/python benchmarks/choice_replies.py --data ../shared/data bench-out/*/*/index.db

(A cache holds replies, not prompts: a reply is matched to the first question whose two options it names.)
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import Counter
from contextlib import closing
from pathlib import Path

from thinkgraph.methods import answer_shape, choice, replies


def option_questions(data: Path) -> list[tuple[str, tuple[str, str]]]:
    """Every question (any dataset under ``data``) that offers two options, with them; lines that are not
    a JSON object with a "question" are skipped."""
    found: list[tuple[str, tuple[str, str]]] = []
    for path in sorted(data.glob("*/questions*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            question = record.get("question") if isinstance(record, dict) else None
            posed = choice.offered(question) if isinstance(question, str) else None
            if isinstance(question, str) and posed is not None:
                found.append((question, posed[1]))
    return found


def cached_replies(index: Path) -> list[str]:
    """The text replies in ``index``'s LLM cache (read only)."""
    if not index.is_file():
        raise sqlite3.OperationalError("no such file")
    with closing(sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)) as db:
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


def classify(reply: str, question: str, options: tuple[str, str]) -> str:
    answer, reasoning = replies.answer_part(reply)
    short = answer_shape.short_answer(replies.without_markers(answer), question)
    if choice.contradicted_choice(short, reasoning, question) is not None:
        return "contradict"
    named = [o for o, _, _ in answer_shape.named_options(short, options)]
    if len(named) != 1 or answer_shape.is_negated(short):
        return "no one option"
    reasoned = choice.reasoned_option(reasoning or "", question)
    return "agree" if reasoned is not None and reasoned[0] == named[0] else "not read"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the folder with <dataset>/questions*.jsonl")
    parser.add_argument("indexes", type=Path, nargs="+", help="index.db files whose LLM caches to read")
    args = parser.parse_args()
    if not args.data.is_dir() or not any(args.data.glob("*/questions*.jsonl")):
        parser.error(f"--data {args.data}: no <dataset>/questions*.jsonl in it")
    questions = option_questions(args.data)
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    for index in args.indexes:
        try:
            texts = cached_replies(index)
        except sqlite3.Error as error:
            sys.exit(f"{index}: not an index with an LLM cache ({error})")
        for reply in texts:
            folded = reply.casefold()
            match = next(((q, o) for q, o in questions if all(x.casefold() in folded for x in o)), None)
            if reply in seen or match is None:
                continue
            seen.add(reply)
            kind = classify(reply, *match)
            counts[kind] += 1
            if kind == "contradict":
                print(f"contradict: {match[0]} | {' '.join(reply.split())[:160]}")
    print(f"{len(questions)} questions offer two options; {len(seen)} distinct cached replies name both options "
          f"of one: {counts['agree']} agree with their reasoning, {counts['contradict']} contradict it "
          f"(asked again), {counts['no one option']} name no one option, {counts['not read']} not read")


if __name__ == "__main__":
    main()
