"""The incremental derived stages on MuSiQue (issue 29): the synonym stage's HNSW pairs against the exact
all-pairs reference, and MuSiQue indexed in 10 batches against one pass (SYNONYM edges, Recall@k of
`ppr` and dense on the dev questions, modularity of the communities).

    python benchmarks/scale_musique.py --data ../shared/data/musique --out /tmp/musique-batches

Both indexes import the GPT-3.5 OpenIE triples (as benchmarks/musique_retrieval.py) with the default
embedder (all-MiniLM-L6-v2) and build communities ([index] communities = "always"; imported graphs
skip them by default). Recall is measured as `eval --retrieval-only` does (retrieval_common.py)."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from retrieval_common import evaluate, load_questions, warm_queries  # noqa: E402
from scale_measure import top_modularity  # noqa: E402

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.graph.ann import exact_pairs  # noqa: E402
from thinkgraph.index.resolve import exact_synonym_pairs  # noqa: E402
from thinkgraph.models import Edge  # noqa: E402

BATCHES = 10


def settings() -> Settings:
    s = Settings()
    s.index.communities = "always"
    return s


def build(path: Path, corpus_files: list[Path], openie: Path) -> dict[str, Any]:
    timings: dict[str, float] = {}
    started = time.perf_counter()
    with ThinkGraph(path, settings=settings(), create=True) as tg:
        for part in corpus_files:
            report = tg.index([part], openie=openie)
            for stage, seconds in report.timings.items():
                timings[stage] = round(timings.get(stage, 0.0) + seconds, 2)
    return {"seconds": round(time.perf_counter() - started, 1), "timings": timings}


def split(corpus: Path, out: Path) -> list[Path]:
    lines = [line for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    size = -(-len(lines) // BATCHES)
    parts = []
    for b in range(BATCHES):
        part = out / f"batch{b}.jsonl"
        part.write_text("\n".join(lines[b * size:(b + 1) * size]) + "\n", encoding="utf-8")
        parts.append(part)
    return parts


def synonyms(tg: ThinkGraph) -> dict[tuple[str, str], float]:
    return {(e.src, e.dst): e.weight for e in tg.store.iter_edges(["SYNONYM"])}


def recall(tg: ThinkGraph, questions: list[dict[str, Any]], repeats: int) -> dict[str, Any]:
    warm_queries(tg, questions)
    rows = {m: evaluate(tg, m, m, {}, questions, repeats) for m in ("ppr", "naive")}
    return {m: {"R@2": round(r.r2, 1), "R@5": round(r.r5, 1), "R@10": round(r.r10, 1), "ms": round(r.ms, 1)}
            for m, r in rows.items()}


def reference_pairs(tg: ThinkGraph) -> dict[str, Any]:
    """The exact pairs (with and without the numbers-and-dates rule) and the time of the exact pass."""
    ids, vectors = tg.store.get_vectors(["entity"])
    names = {n.id: n.text for n in tg.store.iter_nodes("entity")}
    started = time.perf_counter()
    exact = exact_synonym_pairs(ids, vectors, [names[i] for i in ids], 0.9)
    seconds = time.perf_counter() - started
    raw = [(min(ids[a], ids[b]), max(ids[a], ids[b]), c) for a, b, c in exact_pairs(vectors, 0.9)]
    return {"exact": exact, "raw": raw, "exact_s": round(seconds, 2), "entities": len(ids)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/musique"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["THINKGRAPH_CACHE_DIR"] = str(args.out / "cache")
    corpus, openie = args.data / "corpus.jsonl", args.data / "openie_gpt35.jsonl"
    questions = load_questions(args.data / "questions_dev.jsonl")
    result: dict[str, Any] = {"one_pass": build(args.out / "one.db", [corpus], openie),
                              "batches": build(args.out / "batches.db", split(corpus, args.out), openie)}
    with ThinkGraph.open(args.out / "one.db", settings=settings()) as one, \
            ThinkGraph.open(args.out / "batches.db", settings=settings()) as many:
        ref = reference_pairs(one)
        found_one, found_many = synonyms(one), synonyms(many)
        result["synonyms"] = {
            "entities": ref["entities"], "exact_pairs": len(ref["exact"]), "exact_pass_s": ref["exact_s"],
            "pairs_without_the_date_rule": len(ref["raw"]), "one_pass": len(found_one), "batches": len(found_many),
            "recall_of_exact": round(len(found_one.keys() & ref["exact"].keys()) / max(1, len(ref["exact"])), 4),
            "not_exact": len(found_one.keys() - ref["exact"].keys()), "batches_equal_one_pass": found_one == found_many}
        result["modularity"] = {"one_pass": round(top_modularity(one.store), 4),
                                "batches": round(top_modularity(many.store), 4)}
        result["recall_one_pass"] = recall(one, questions, args.repeats)
        result["recall_batches"] = recall(many, questions, args.repeats)
        # the same index with the pairs the date rule drops (as before the rule), for its effect on recall
        dropped = [(a, b, c) for a, b, c in ref["raw"] if (a, b) not in ref["exact"]]
        one.store.add_edges(Edge(a, b, "SYNONYM", weight=c, props={"cosine": round(c, 4)}) for a, b, c in dropped)
        one.mark_changed()
        result["recall_with_date_pairs"] = recall(one, questions, args.repeats)
    (args.out / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
