"""With a real model, does each method's pool survive? On MuSiQue dev questions, Recall@5 of the passages
each method finally returns with the model (its evidence, then its citations) beside the Recall@5 of
its pool (the same method without an LLM: its own retrieve steps, every decision at its neutral
default), with calls, tokens and seconds per question, and IRCoT beside them. An unusable keyword
list, sub-query or selection must fall back to the pool, not empty it (goal: final >= pool - 5).

By default llama-cpp-python's server with Gemma 3 270M (the real-model tests' server); --base-url and
--model measure any other OpenAI-compatible server.

    python benchmarks/real_model_retrieval.py --index musique.db --questions 10

(Build musique.db as benchmarks/retrieval_compare.py says; tog3 runs without communities there.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the server launcher the tests use

from realmodel import LlamaServer, model_file  # noqa: E402
from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.eval.metrics import recall_at_k  # noqa: E402
from thinkgraph.eval.runner import retrieved_documents  # noqa: E402

# Small settings (a tiny CPU model is slow), as the real-model tests use.
METHODS: list[tuple[str, dict[str, Any]]] = [
    ("a2rag", {"i_max": 1}),
    ("topg", {"mode": "local", "max_iter": 1}),
    ("tog3", {"horizon": 2, "use_communities": False}),
    ("ircot", {}),
]


def _settings(base_url: str, model: str) -> Settings:
    s = Settings()
    s.llm.base_url, s.llm.model, s.llm.concurrency = base_url, model, 1
    s.llm.timeout_s = 600.0
    return s


def fresh_copy(index: Path, folder: Path) -> Path:
    """A copy of the index without its LLM cache, so that every call is made, timed and counted."""
    copy = folder / index.name
    with sqlite3.connect(index) as source, sqlite3.connect(copy) as target:
        source.backup(target)
        target.execute("DELETE FROM llm_cache")
    return copy


def measure(index: Path, questions: list[dict[str, Any]], base_url: str, model: str,
            methods: list[str]) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder, \
            ThinkGraph(fresh_copy(index, Path(folder)), settings=_settings(base_url, model), create=False) as tg:
        for method, options in [(m, o) for m, o in METHODS if m in methods]:
            pool: list[float] = []
            final: list[float] = []
            calls, tokens, seconds = [], [], []
            statuses: dict[str, int] = {}
            for q in questions:
                gold = q["supporting_ids"]
                if method != "ircot":
                    pool.append(recall_at_k(retrieved_documents(tg.retrieve(q["question"], method, **options)),
                                            gold, 5))
                started = time.perf_counter()
                answer = tg.ask(q["question"], method, **options)
                seconds.append(time.perf_counter() - started)
                final.append(recall_at_k(retrieved_documents(answer), gold, 5))
                calls.append(answer.cost.calls)
                tokens.append(answer.cost.total_tokens)
                statuses[str(answer.status)] = statuses.get(str(answer.status), 0) + 1
                print(f"{method} question {len(final)}/{len(questions)}: {answer.status}, final R@5 {final[-1]:.2f}, "
                      f"{answer.cost.calls} calls, {seconds[-1]:.0f} s", file=sys.stderr, flush=True)
            rows.append({"method": method, "options": options, "pool_r5": 100 * statistics.mean(pool) if pool else None,
                         "final_r5": 100 * statistics.mean(final), "calls": statistics.mean(calls),
                         "tokens": statistics.mean(tokens), "seconds_median": statistics.median(seconds),
                         "statuses": statuses})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="gemma-3-270m")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--methods", default=",".join(m for m, _ in METHODS), help="comma-separated")
    parser.add_argument("--out", type=Path, default=Path("bench-out/real_model_retrieval.json"))
    args = parser.parse_args()
    questions = [json.loads(x) for x in (args.data / "musique/questions_dev.jsonl").read_text().splitlines()
                 if x.strip()][: args.questions]
    with contextlib.ExitStack() as stack:
        base_url = args.base_url
        if base_url is None:
            cache = ROOT / ".thinkgraph" / "models"
            cache.mkdir(parents=True, exist_ok=True)
            served = stack.enter_context(LlamaServer(model_file(cache), cache / "server.log", n_threads=args.threads))
            base_url = served.base_url
        rows = measure(args.index, questions, base_url, args.model, args.methods.split(","))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    print(f"| method | pool R@5 | final R@5 | calls | tokens | s (median) | statuses |  ({len(questions)} questions)")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        label = r["method"] + "".join(f" {k}={v}" for k, v in r["options"].items())
        pool = "-" if r["pool_r5"] is None else f"{r['pool_r5']:.1f}"
        print(f"| {label} | {pool} | {r['final_r5']:.1f} | {r['calls']:.1f} | {r['tokens']:.0f} | "
              f"{r['seconds_median']:.1f} | {', '.join(f'{k} {v}' for k, v in sorted(r['statuses'].items()))} |")


if __name__ == "__main__":
    main()
