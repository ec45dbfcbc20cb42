"""Answer quality with a real local instruct model: every method on the first N questions of MuSiQue dev
and HotpotQA dev, with exact match, F1, Recall@5 of the cited passages, statuses, the share of calls
whose reply stayed unusable after the bounded repair, calls, tokens and seconds per question.

By default it starts llama-cpp-python's server with Qwen2.5-Coder-1.5B-Instruct (``--model-name
qwen-1.5b``; ``bash scripts/local_model.sh qwen-1.5b`` installs it) on every physical core (``--threads``); give
``--base-url``/``--model`` to measure any other OpenAI-compatible server. Each dataset is indexed once
(MuSiQue with its GPT-3.5 OpenIE triples, HotpotQA with the model-free extractor) under ``--out``, and
answers go through ``thinkgraph eval``'s runner: one JSON line per (method, question), so a killed or
niced background run resumes where it stopped and a rerun asks only what is missing (the LLM cache in
each index makes a repeated prompt free).

    nice -n 10 .venv/bin/python benchmarks/answer_quality.py run --questions 20 &   # hours on 2 cores
    .venv/bin/python benchmarks/answer_quality.py report                              # the table, any time
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the server launcher the tests use
sys.path.insert(0, str(ROOT / "benchmarks"))  # answer_pairs, when run from elsewhere
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from answer_pairs import AnswerTexts, before_after, paired_table  # noqa: E402

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.errors import InputError  # noqa: E402
from thinkgraph.eval.datasets import Question, load_questions  # noqa: E402
from thinkgraph.eval.metrics import recall_at_k  # noqa: E402
from thinkgraph.eval.runner import EvalRunner, MethodSpec  # noqa: E402

DATASETS = {"musique": ("musique", "openie_gpt35.jsonl"), "hotpotqa": ("hotpotqa", None)}
# Each method at its defaults for a small local model (docs/local-models.md says why each setting).
# tog3 at horizon K = 1: at the paper's K = 3 one question takes 10-20 minutes here (docs/answer-quality.md).
# kgr at 5 steps, not the paper's n = 10: 2.81-2.99 times `ppr`'s seconds on MuSiQue's first 20 against 4.85, at
# 34.9 F1 against 39.5 there (`ppr` 25.3) and 70.0 against 68.3 on HotpotQA's (docs/local-models.md).
METHODS = ["none", "naive", "ppr", "ircot", "a2rag", "topg", "tog3:horizon=1", "kgr:steps=5"]
STATUSES = ("answered", "abstained", "failed", "truncated", "error")
SHIPPED = ROOT / "benchmarks" / "results" / "answer_quality"  # the records docs/answer-quality.md reports


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The module's text as written, and each option's default."""


def settings(base_url: str, model: str) -> Settings:
    s = Settings()
    s.llm.base_url, s.llm.model, s.llm.concurrency = base_url, model, 1
    s.llm.timeout_s = 900.0  # one CPU decoding thread: a long prompt is slow, not lost
    s.llm.context_window = 8192
    return s


def build_index(path: Path, data: Path, name: str) -> None:
    """The dataset's index, built without the LLM (the OpenIE triples stand for an LLM's extraction,
    summaries are first sentences), so that every call measured is a question's; an index built by an
    earlier run is only checked (its documents are unchanged)."""
    folder, openie = DATASETS[name]
    kwargs: dict[str, Any] = {"openie": data / folder / openie} if openie else {}
    s = Settings()
    # every method's index parts: communities for tog3 (an imported graph skips them by default) and,
    # without triples, sentences as propositions for topg
    s.index.communities, s.index.nolm_propositions = "always", openie is None
    started = time.perf_counter()
    with ThinkGraph(path, settings=s, create=True) as tg:
        report = tg.index([data / folder / "corpus.jsonl"], **kwargs)
    print(f"[{name}] index: {report.indexed} passages indexed, {report.unchanged} unchanged, "
          f"{time.perf_counter() - started:.0f} s", flush=True)


def run(args: argparse.Namespace, base_url: str, model: str) -> None:
    # the load before any question: other work on the machine (the server, idle, adds none; asked, it
    # adds its threads, so the load at the end cannot tell idle cores from busy ones)
    load_at_start = os.getloadavg()
    specs = [MethodSpec.parse(m) for m in args.methods]
    for name in args.datasets:
        out = args.out / name
        out.mkdir(parents=True, exist_ok=True)
        questions = load_questions(args.data / DATASETS[name][0] / "questions_dev.jsonl", limit=args.questions)
        build_index(out / "index.db", args.data, name)
        with ThinkGraph(out / "index.db", settings=settings(base_url, model)) as tg:
            for spec in specs:  # one method at a time, so that a partial run has whole rows
                runner = EvalRunner(tg, [spec], out, concurrency=1)
                if runner.missing(questions):
                    started = time.perf_counter()
                    asyncio.run(runner.run(questions))
                    print(f"[{name}] {spec.label}: {time.perf_counter() - started:.0f} s", flush=True)
    _write_meta(args.out, model, base_url, load_at_start)


def _write_meta(out: Path, model: str, base_url: str, load_at_start: tuple[float, float, float]) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    meta = {"model": model, "base_url": base_url, "commit": commit.stdout.strip(), "date": time.strftime("%Y-%m-%d"),
            "load_average": os.getloadavg(), "load_average_at_start": load_at_start, "cores": os.cpu_count()}
    (out / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")


def _records(out: Path) -> list[dict[str, Any]]:
    path = out / "records.jsonl"
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        with contextlib.suppress(json.JSONDecodeError):
            rows.append(json.loads(line))
    return rows


def row(label: str, rs: list[dict[str, Any]], gold: dict[str, list[str]]) -> dict[str, Any]:
    """One method's figures over its records (means in percent, costs as medians per question)."""
    def mean(key: str) -> float:
        values = [r["metrics"][key] for r in rs if key in r.get("metrics", {})]
        return 100 * statistics.mean(values) if values else 0.0

    cited_r5 = [recall_at_k(r.get("cited") or [], gold[r["qid"]], 5) for r in rs if gold.get(r["qid"])]
    calls = sum((r.get("cost") or {}).get("calls", 0) for r in rs)
    unusable = sum((r.get("llm") or {}).get("parse_failures", 0) for r in rs)

    def median(key: str) -> float:
        return statistics.median([(r.get("cost") or {}).get(key, 0) for r in rs]) if rs else 0.0

    def all_calls(r: dict[str, Any]) -> int:  # the method's calls, those the LLM cache answered included
        cost = r.get("cost") or {}
        return int(cost.get("calls", 0)) + int(cost.get("cached_calls", 0))

    return {"method": label, "questions": len(rs), "em": mean("em"), "f1": mean("f1"),
            "cited_r5": 100 * statistics.mean(cited_r5) if cited_r5 else 0.0,
            "statuses": {s: sum(str(r.get("status")) == s for r in rs) for s in STATUSES},
            "unusable_pct": 100 * unusable / calls if calls else 0.0,
            "calls": statistics.median([all_calls(r) for r in rs]) if rs else 0.0,
            "cached_calls": median("cached_calls"), "prompt_tokens": median("prompt_tokens"),
            "prompt_tokens_read": median("prompt_tokens_read"),
            "completion_tokens": median("completion_tokens"), "seconds": median("seconds")}


def dataset_names(text: str) -> list[str]:
    """``--datasets``: known names only (argparse says which are known)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in DATASETS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown dataset(s) {', '.join(unknown) or '(none)'}; "
                                         f"known: {', '.join(DATASETS)}")
    return names


def median_text(x: float) -> str:
    """A median count as measured: 7.5 stays 7.5 (an even number of questions), 8.0 reads 8."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def answer_texts(folder: Path, questions: list[Question]) -> AnswerTexts | None:
    """The gold answers and the corpus's texts (title and text), for the report's answer-shown count;
    None without the corpus file."""
    corpus = folder / "corpus.jsonl"
    if not corpus.is_file():
        return None
    texts = {}
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            texts[str(doc["id"])] = f"{doc.get('title', '')} {doc.get('text', '')}"
    return AnswerTexts({q.id: list(q.answers) for q in questions}, texts)


class NoRecordsError(Exception):
    """The report found no record of any question under --out."""


def report(args: argparse.Namespace) -> str:
    lines = []
    found = 0
    for name in args.datasets:
        out = args.out / name
        questions = load_questions(args.data / DATASETS[name][0] / "questions_dev.jsonl", limit=args.questions)
        gold = {q.id: list(q.supporting_ids) for q in questions}
        records = [r for r in _records(out) if r.get("qid") in gold]
        found += len(records)
        labels = list(dict.fromkeys(r["label"] for r in records))
        lines += [f"\n{name} (first {len(questions)} dev questions)\n",
                  "| method | n | EM | F1 | ppr's F1, same questions | cited R@5 | answered / abstained / failed / "
                  "truncated / error | unusable % of calls | calls | prompt tok sent (read) | completion tok | s |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        ppr_f1 = {x["qid"]: x["metrics"].get("f1", 0.0) for x in records if x["label"] == "ppr"}
        cached_rows = False
        for label in labels:
            rs = [x for x in records if x["label"] == label]
            r = row(label, rs, gold)
            same = [ppr_f1[x["qid"]] for x in rs if x["qid"] in ppr_f1]
            paired = f"{100 * statistics.mean(same):.1f}" if len(same) == len(rs) and rs else "–"
            statuses = " / ".join(str(r["statuses"][s]) for s in STATUSES)
            cached = f" ({median_text(r['cached_calls'])} cached)" if r["cached_calls"] else ""
            calls = median_text(r["calls"]) + cached
            cached_rows = cached_rows or bool(r["cached_calls"])
            # tokens the server evaluated where it reports them (llama.cpp); llama-cpp-python does not
            read = f" ({r['prompt_tokens_read']:.0f})" if r["prompt_tokens_read"] else ""
            lines.append(f"| {label} | {r['questions']} | {r['em']:.1f} | {r['f1']:.1f} | {paired} | "
                         f"{r['cited_r5']:.1f} | "
                         f"{statuses} | {r['unusable_pct']:.1f} | {calls} | {r['prompt_tokens']:.0f}{read} | "
                         f"{r['completion_tokens']:.0f} | {r['seconds']:.1f} |")
        lines += paired_table(records, gold, answer_texts(args.data / DATASETS[name][0], questions))
        if getattr(args, "before", None) is not None:  # (a Namespace built by hand may lack it)
            lines += before_after(records, [r for r in _records(args.before / name) if r.get("qid") in gold])
        if cached_rows:
            lines.append("\n(cached: calls the index's LLM cache answered, an earlier row having asked the same "
                         "prompt; tokens and seconds count only the calls sent to the model)")
    if not found:
        raise NoRecordsError(f"no answers recorded under {args.out} for {','.join(args.datasets)} (run first; the "
                             f"measured ones are in {SHIPPED.relative_to(ROOT)}: --out {SHIPPED.relative_to(ROOT)})")
    meta = args.out / "meta.json"
    if meta.exists():
        m = json.loads(meta.read_text())
        lines.append(f"\nmodel {m['model']}, commit {m['commit']}, {m['date']}, {m['cores']} cores, "
                     f"load average at the end {', '.join(f'{x:.2f}' for x in m['load_average'])}"
                     + (f"; before the first question {', '.join(f'{x:.2f}' for x in m['load_average_at_start'])}"
                        if m.get("load_average_at_start") else ""))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("command", choices=["run", "report"],
                        help="run: ask what is not recorded yet, then report; report: the tables of the records")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data",
                        help="the folder holding musique/ and hotpotqa/ (corpus.jsonl, questions_dev.jsonl)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "answer_quality",
                        help=f"records, indexes and the report's input; the measured records: {SHIPPED}")
    parser.add_argument("--datasets", default="musique,hotpotqa", type=dataset_names,
                        help=f"comma-separated, of {', '.join(DATASETS)}")
    parser.add_argument("--questions", type=int, default=20, help="the first N dev questions of each dataset")
    parser.add_argument("--methods", nargs="+", default=METHODS,
                        help="methods with options as in eval: ppr a2rag:i_max=1,rewrite=false")
    parser.add_argument("--before", type=Path, help="report: an earlier run's --out, each row compared with it")
    parser.add_argument("--model-name", default="qwen-1.5b", help="a packaged model to serve: gemma-270m | qwen-1.5b")
    parser.add_argument("--base-url", help="an OpenAI-compatible server to measure instead of starting one")
    parser.add_argument("--model", help="the model name the --base-url server answers to")
    parser.add_argument("--threads", type=int, default=None,
                        help="the server's threads (writing and reading prompts); default: every physical core "
                             "(1 when other work shares the machine)")
    parser.add_argument("--logprobs", action="store_true",
                        help="serve with log-probabilities (every prompt token's logits: prompts read ~17%% "
                             "slower), so that verdicts decide by P(yes); by default, as scripts/local_model.sh "
                             "serves, verdicts are read as written")
    args = parser.parse_args()
    try:
        measure(args)
        sys.stdout.flush()  # here, where a reader that left (`report | head`) is caught below
    except (InputError, NoRecordsError) as exc:  # a wrong path or an empty --out: one line, not a traceback
        hint = "" if args.data.is_dir() else (f" (--data: the folder holding musique/ and hotpotqa/; {args.data} "
                                              "is not there)")
        sys.exit(f"error: {exc}{hint}")
    except BrokenPipeError:  # `report | head`: the reader left; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)


def measure(args: argparse.Namespace) -> None:
    if args.command == "report":
        print(report(args))
        return
    with contextlib.ExitStack() as stack:
        base_url, model = args.base_url, args.model
        if base_url is None:
            from realmodel import LlamaServer, test_cache

            args.out.mkdir(parents=True, exist_ok=True)
            server = LlamaServer.of(args.model_name, test_cache(), args.out / "llama-server.log",
                                    n_threads=args.threads, logprobs=args.logprobs)
            served = stack.enter_context(server)
            base_url, model = served.base_url, served.model
        run(args, base_url, model or "default")
    print(report(args))


if __name__ == "__main__":
    main()
