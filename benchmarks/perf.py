"""One table of the performance goals (issue #18, #17's indexing speed): each figure beside a
baseline measured in the same run, and their ratio.

    .venv/bin/pip install -e '.[bench]'                           # once: fast-pagerank, py-spy, pyinstrument
    PYTHONPATH=src .venv/bin/python benchmarks/perf.py --quick     # CI-sized inputs, a few minutes
    PYTHONPATH=src .venv/bin/python benchmarks/perf.py             # full: 1M-node PPR, MuSiQue, 1k/10k LLM

Timings are medians of several runs; on a shared machine read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf_index_llm  # noqa: E402
import perf_ppr  # noqa: E402
import perf_service  # noqa: E402
import perf_typedkg  # noqa: E402

Row = tuple[str, float, str, float, str]  # goal, figure, baseline name, baseline figure, target


def _cold(args: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def cli_rows(index: Path | None, question: str, runs: int) -> list[Row]:
    py = [sys.executable]
    rows: list[Row] = [("`thinkgraph --help` (s, cold)", _cold([*py, "-m", "thinkgraph", "--help"], runs),
                        "python -c pass", _cold([*py, "-c", "pass"], runs), "≤ 0.3 s")]
    if index is not None:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        cold = _cold([*py, "-m", "thinkgraph", "-i", str(index), "ask", question, "-m", "ppr"], runs, env)
        probe = ("import sys, time; from thinkgraph.api import ThinkGraph; tg = ThinkGraph.open(sys.argv[1]); "
                 "tg.ask(sys.argv[2], method='ppr'); t = time.perf_counter(); tg.ask(sys.argv[2] + '?', method='ppr'); "
                 "print(time.perf_counter() - t)")
        warm = float(subprocess.run([*py, "-c", probe, str(index), question], check=True, capture_output=True,
                                    text=True, env=env).stdout.split()[-1])
        rows.append(("`ask -m ppr` on MuSiQue (s, cold process)", cold, "same ask in a warm process", warm,
                     "p50 ≤ 1.0 s"))
    return rows


def musique_rows(data: Path, work: Path) -> list[Row]:
    """The import index, beside the encoding work HippoRAG 2 does for the same corpus and graph
    (passages, entities and facts through sentence-transformers MiniLM) timed in this process."""
    index = work / "musique.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "thinkgraph", "-i", str(index), "index", str(data / "corpus.jsonl"),
                    "-e", "import", "--openie", str(data / "openie_gpt35.jsonl")], check=True, capture_output=True,
                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    ours = time.perf_counter() - started
    return [("MuSiQue import index (s)", ours, "HippoRAG 2's encoding work, ST MiniLM", _hipporag_encoding(data),
             "≤ 186 s (HippoRAG 2)")]


def _hipporag_encoding(data: Path) -> float:
    from sentence_transformers import SentenceTransformer

    from thinkgraph.embed.local import resolve_model_path

    passages = [json.loads(line) for line in (data / "corpus.jsonl").open(encoding="utf-8")]
    texts = [f"{p['title']}\n{p['text']}" for p in passages]
    entities: set[str] = set()
    facts: set[str] = set()
    for line in (data / "openie_gpt35.jsonl").open(encoding="utf-8"):
        record = json.loads(line)
        entities.update(str(e) for e in record.get("entities") or [])
        for triple in record.get("extracted_triples") or record.get("triples") or []:
            if isinstance(triple, list) and len(triple) == 3:
                entities.update(str(t) for t in (triple[0], triple[2]))
                facts.add(" ".join(str(t) for t in triple))
    started = time.perf_counter()
    model = SentenceTransformer(str(resolve_model_path("all-MiniLM-L6-v2")[1]), device="cpu", local_files_only=True)
    model.encode(texts + sorted(entities) + sorted(facts), batch_size=64, normalize_embeddings=True)
    return time.perf_counter() - started


def llm_rows(work: Path, passages: list[int], latency: float) -> list[Row]:
    rows: list[Row] = []
    for n in passages:
        r = perf_index_llm.run(work / f"llm{n}", n, latency, 16, check_determinism=n <= 1000)
        same = {True: "same index twice", False: "INDEX DIFFERS", None: "not checked"}[r["deterministic"]]
        rows.append((f"LLM indexing {n} passages (s; {r['calls']} calls; {same})", r["seconds"],
                     f"ideal calls×{latency}/16", r["ideal"], "≤ 1.2× ideal"))
        rows.append((f"LLM indexing {n} passages (s)", r["seconds"], "plain httpx client, same calls",
                     r["baseline"], "≤ 1.2× baseline"))
        print(f"  stage timings ({n} passages):", json.dumps(r["timings"]), flush=True)
    return rows


def ppr_rows(nodes: int, nnz: int, runs: int) -> list[Row]:
    figures = perf_ppr.run(nodes, nnz, runs)
    label = f"{nodes / 1e6:g}M nodes / {figures.nnz / 1e6:.1f}M entries"
    rows: list[Row] = []
    for goal, ours, name, base in figures.rows:
        target = "≥ 2× faster" if "exact" in goal else "≤ 20 ms"
        rows.append((f"{goal}, {label}", ours, name, base, target))
    for d, overlap in figures.overlap.items():
        rows.append((f"local push top-100 overlap d={d}", overlap, "exact vector", 1.0, "≥ 0.95"))
    return rows


def service_rows(index: Path, questions: Path, work: Path) -> list[Row]:
    one, two = (perf_service.measure(index, perf_service.questions_from(questions), n, work) for n in (1, 2))
    print(f"  service: the load generator used {one.client_cores:.2f} / {two.client_cores:.2f} cores "
          "(1 / 2 workers)", flush=True)
    return [("service retrieve, 16 clients, 2 workers (req/s)", two.throughput, "same with 1 worker",
             one.throughput, "≥ 1.8× (ratio ≤ 0.56)"),
            ("service retrieve p95, 16 clients, 2 workers (s)", two.p95, "single-client p50", two.single_p50,
             "p95 ≤ 5× p50 (ratio ≥ 0.2)")]


def typedkg_rows(nodes: int, work: Path) -> list[Row]:
    r = perf_typedkg.run(nodes, work / "kg")
    label = f"{nodes / 1e6:g}M nodes"
    large = nodes > 1_000_000  # the targets: 1M in 45 s and 1.5 GB; 5M within 8 GB
    return [(f"typed-KG import {label} (s)", r["import"]["seconds"], "json.load of the same file",
             r["json_load"]["seconds"], "-" if large else "≤ 45 s"),
            (f"typed-KG import {label} peak RSS (MB)", r["import"]["peak_mb"], "json.load peak RSS",
             r["json_load"]["peak_mb"], "≤ 8,000 MB" if large else "≤ 1,500 MB"),
            (f"RetrieveNode p95 on {label} (ms)", r["retrieve"]["p95_ms"], "RetrieveNode p50",
             r["retrieve"]["p50_ms"], "p95 ≤ 5 ms"),
            (f"RetrieveNode p95 on {label}, first pass after opening (ms)", r["retrieve"]["first_p95_ms"],
             "its p50", r["retrieve"]["first_p50_ms"], "(cold page cache: disk-bound)")]


def print_table(rows: list[Row]) -> None:
    print("| goal | figure | baseline (same run) | baseline figure | baseline / figure | target |")
    print("|---|---:|---|---:|---:|---|")
    for goal, ours, name, base, target in rows:
        ratio = base / ours if ours else float("nan")
        print(f"| {goal} | {ours:.4g} | {name} | {base:.4g} | {ratio:.2f} | {target} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="CI-sized inputs")
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/musique")
    parser.add_argument("--work", type=Path, default=Path("/tmp/thinkgraph-perf"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip", action="append", default=[],
                        help="cli | musique | llm | ppr | service | typedkg")
    parser.add_argument("--kg-nodes", default="1000000,5000000", help="full mode: typed-KG sizes")
    parser.add_argument("--llm-passages", default="1000,10000", help="full mode: passages per LLM run")
    args = parser.parse_args()
    if "ppr" not in args.skip:
        perf_ppr.require_bench(otherwise=", or pass --skip ppr")
    args.work.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    if "ppr" not in args.skip:
        rows += ppr_rows(*((100_000, 1_400_000) if args.quick else (1_000_000, 14_000_000)), args.runs)
    if "llm" not in args.skip:
        sizes = [150] if args.quick else [int(n) for n in args.llm_passages.split(",")]
        rows += llm_rows(args.work, sizes, 0.05 if args.quick else 0.2)
    if "typedkg" not in args.skip:
        for nodes in [20_000] if args.quick else [int(n) for n in args.kg_nodes.split(",")]:
            rows += typedkg_rows(nodes, args.work)
    musique = None
    if "musique" not in args.skip and not args.quick and args.data.is_dir():
        rows += musique_rows(args.data, args.work)
        musique = args.work / "musique.db"
    if "cli" not in args.skip:
        rows += cli_rows(musique, "Who did Barry Wesson's team play in the World Series last year?", args.runs)
    if "service" not in args.skip and musique is not None:
        rows += service_rows(musique, args.data / "questions_dev.jsonl", args.work)
    print_table(rows)


if __name__ == "__main__":
    main()
