"""Questions a minute with 1, 2 and 4 questions in flight (``thinkgraph eval --concurrency N``) against
one OpenAI-compatible server, one method, the same questions at every setting.

Each setting runs with its own seed, so the index's LLM cache answers none of its calls (the seed is
part of the cache key; at temperature 0 it changes no reply). The LLM client's own concurrency is set
to the same N, so N questions' calls really are in flight together. What more in flight buys depends
on the server: llama.cpp's ``llama-server -np N`` and vLLM decode several requests at once;
llama-cpp-python's server answers one request at a time, so there the figure shows what waiting
costs (and a one-slot prompt cache that interleaved questions keep evicting).

The seed does not reach a server's own prompt cache: llama-server keeps earlier prompts' states (its
slots, and ``--cache-ram``), so a second setting in the same server reads none of the prompts the first
read and seems several times faster. Against such a server, measure one setting per fresh server
(``--in-flight 2`` alone, the server started again before each).

    .venv/bin/python benchmarks/eval_throughput.py --base-url http://127.0.0.1:8000/v1 \\
        --model qwen2.5-coder-1.5b-instruct --index bench-out/answer_quality/musique/index.db \\
        --questions ../shared/data/musique/questions_dev.jsonl --limit 8 --method ppr
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.eval.datasets import Question, load_questions  # noqa: E402
from thinkgraph.eval.runner import EvalRunner, MethodSpec  # noqa: E402

SEED_BASE = 48_000  # a seed per setting, apart from any a user's runs would take


@dataclass(frozen=True)
class Throughput:
    in_flight: int
    questions: int
    seconds: float
    f1: float
    calls: int

    @property
    def per_minute(self) -> float:
        return 60 * self.questions / self.seconds if self.seconds else 0.0


async def measure(tg: ThinkGraph, questions: Sequence[Question], spec: MethodSpec, in_flight: int,
                  out: Path) -> Throughput:
    """One setting: every question through the eval runner with ``in_flight`` at once."""
    runner = EvalRunner(tg, [spec], out, concurrency=in_flight)
    started = time.perf_counter()
    await runner.run(questions)
    seconds = time.perf_counter() - started
    records = _records(out)
    return Throughput(in_flight, len(records), seconds,
                      100 * statistics.mean(r["metrics"].get("f1", 0.0) for r in records) if records else 0.0,
                      sum(int(r.get("cost", {}).get("calls", 0)) for r in records))


def _records(out: Path) -> list[dict[str, Any]]:
    path = out / "records.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def settings_for(base: Settings, in_flight: int) -> Settings:
    """The run's settings with ``in_flight`` calls allowed and the setting's own seed."""
    s = base.model_copy(deep=True)
    s.llm.concurrency, s.llm.seed = in_flight, SEED_BASE + in_flight
    return s


def run_all(opener: Callable[[Settings], ThinkGraph], base: Settings, questions: Sequence[Question], spec: MethodSpec,
            settings: Sequence[int]) -> list[Throughput]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in settings:
            with opener(settings_for(base, n)) as tg:
                rows.append(asyncio.run(measure(tg, questions, spec, n, Path(tmp) / f"in_flight_{n}")))
    return rows


def table(rows: Sequence[Throughput]) -> str:
    first = rows[0].per_minute if rows else 0.0
    lines = ["| in flight | questions | seconds | questions a minute | against 1 in flight | calls | F1 |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{r.per_minute / first:.2f}" if first else "–"
        lines.append(f"| {r.in_flight} | {r.questions} | {r.seconds:.0f} | {r.per_minute:.2f} | {ratio} | "
                     f"{r.calls} | {r.f1:.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--index", type=Path, required=True, help="an index built over the questions' corpus")
    parser.add_argument("--questions", type=Path, required=True, help="a questions file eval reads")
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--method", default="ppr", help="a method with options, as in eval: ppr:top_k=5")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args(argv)
    base = Settings()
    base.llm.base_url, base.llm.model, base.llm.timeout_s = args.base_url, args.model, 900.0
    questions = load_questions(args.questions, limit=args.limit)
    load = os.getloadavg()
    rows = run_all(lambda s: ThinkGraph.open(args.index, settings=s), base, questions,
                   MethodSpec.parse(args.method), args.in_flight)
    print(f"{args.method}, {len(questions)} questions, {args.model} at {args.base_url}; "
          f"load average before {', '.join(f'{x:.2f}' for x in load)}, {os.cpu_count()} cores")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
