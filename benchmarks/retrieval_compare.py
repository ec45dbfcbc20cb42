"""LLM-free retrieval on MuSiQue dev and HotpotQA dev: every retrieval method's Recall@2/5/10 of gold
passages and ms/query beside dense passages and the previous `ppr` configuration, then an ablation
table that turns each lever of `ppr` off (or on) one at a time.

    python benchmarks/retrieval_compare.py --data ../shared/data \
        --musique-index musique.db --hotpot-index hotpot_spacy.db

Build the indexes first (once): `thinkgraph -i musique.db index ../shared/data/musique/corpus.jsonl
-e import --openie ../shared/data/musique/openie_gpt35.jsonl` and `thinkgraph -i hotpot_spacy.db index
../shared/data/hotpotqa/corpus.jsonl -e spacy`. Latencies are medians over --repeats passes after
one untimed question per method (query embeddings cached beforehand for every method alike), on
whatever else the machine is running.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from retrieval_common import (  # noqa: E402
    Row,
    evaluate,
    load_questions,
    paired_ratio,
    print_table,
    same_top5,
    warm_queries,
)

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import RetrievalSettings, Settings, load_settings  # noqa: E402
from thinkgraph.errors import ConfigError, IncompleteIndexError  # noqa: E402

# `ppr` as it was before the levers: HippoRAG 2's fact seeds and dense passage prior only.
PREVIOUS_PPR = {"lexical": False, "link_entities": False, "fact_seeds": "always", "bridge_passages": 0,
                "dense_mix": 0.0, "hop_chain": False}
# Each lever of the default `ppr` set against its other value.
DEFAULTS = RetrievalSettings()
ABLATIONS: list[tuple[str, dict[str, Any]]] = [
    ("BM25 fusion (passages and facts) off", {"lexical": False}),
    ("question entity links off", {"link_entities": False}),
    ("fact seeds always (beside the links)", {"fact_seeds": "always"}),
    ("fact seeds never", {"fact_seeds": "never"}),
    ("second round (bridge entities) " + ("off" if DEFAULTS.bridge_passages else "on"),
     {"bridge_passages": 0 if DEFAULTS.bridge_passages else 2}),
    ("second walk on the whole question, not the residual", {"second_hop_query": "question"}),
    ("chained second passage off", {"hop_chain": False}),
    ("final fusion with the hybrid ranking " + ("off" if DEFAULTS.dense_mix else "on"),
     {"dense_mix": 0.0 if DEFAULTS.dense_mix else 0.5}),
    # the walk a large index gets by default (from local_from_passages passages), forced on these small ones
    ("local walk (prior over candidate passages, push PPR)", {"walk": "local"}),
]
# Each paper's method: its default (its own steps choose the passages, every LLM decision at its neutral
# default) and, beside it, its switch to the shared walk (`ppr`'s ranking feeding the method).
GRAPH_METHODS: dict[str, tuple[tuple[str, dict[str, Any]], ...]] = {
    "a2rag": (("own pool (default: stage 3 PPR, p0 ~ 1/deg, map-back fused with query cosine)", {}),
              ("stage3=shared_walk", {"stage3": "shared_walk"})),
    "topg": (("own pool (default: SuggestNaive entry)", {}), ("entry=ppr_passages", {"entry": "ppr_passages"})),
    "tog3": (("own pool (default: App. A retriever)", {}), ("retrieval=shared", {"retrieval": "shared"})),
}
PAIRED = "each question asked of the method and of ppr in turn, in one process; median of the passes' ratios"
# docs/README reference on MuSiQue dev (same graph and embedder): HippoRAG 2's own code.
HIPPORAG2_MUSIQUE = Row("HippoRAG 2's own code (../shared/data/README.md)", 46.3, 72.8, 79.0, 48.0)


def run_dataset(name: str, index: Path, questions_file: Path, repeats: int, settings: Settings) -> None:
    questions = load_questions(questions_file)
    with ThinkGraph(index, settings=settings) as tg:
        warm_queries(tg, questions)
        dense = evaluate(tg, "naive (dense passages)", "naive", {}, questions, repeats)
        rows = [dense, evaluate(tg, "hybrid (BM25 + dense)", "hybrid", {}, questions, repeats),
                evaluate(tg, "ppr, previous configuration", "ppr", PREVIOUS_PPR, questions, repeats),
                evaluate(tg, "ppr (default)", "ppr", {}, questions, repeats)]
        if name.startswith("MuSiQue"):
            rows.insert(2, HIPPORAG2_MUSIQUE)
        method_rows: list[tuple[str, dict[str, Any]]] = []
        for method, variants in GRAPH_METHODS.items():
            for variant, options in variants:
                try:
                    rows.append(evaluate(tg, f"{method} {variant}", method, options, questions, repeats))
                except IncompleteIndexError:  # an imported graph has no communities by default
                    options = {**options, "use_communities": False}
                    rows.append(evaluate(tg, f"{method} {variant} (no communities)", method, options, questions,
                                         repeats))
                except ConfigError as exc:
                    print(f"{method} {variant}: not run on this index ({exc})")
                    continue
                method_rows.append((method, options))
        print_table(f"{name}: {len(questions)} questions, index {index.name}", rows, dense)
        default = next(r for r in rows if r.label == "ppr (default)")
        print(f"\n{name}: each paper's method against ppr (time: {PAIRED}; R@5 from the table)\n")
        print("| method | R@5 against ppr | top 5 = ppr's (% of questions) | time / ppr's (paired) |")
        print("|---|---|---|---|")
        for row, (method, options) in zip(rows[-len(method_rows):], method_rows, strict=True):
            ratio = paired_ratio(tg, method, options, "ppr", questions, repeats)
            print(f"| {row.label} | {row.r5 - default.r5:+.1f} | {same_top5(row, default):.0f} | {ratio:.2f}x |")
        ablation = [default] + [evaluate(tg, f"ppr, {label}", "ppr", change, questions, repeats)
                                for label, change in ABLATIONS]
        print_table(f"{name}: ppr ablation (one lever changed at a time)", ablation, dense)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--musique-index", type=Path)
    parser.add_argument("--hotpot-index", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--config", type=Path, help="thinkgraph.toml of the indexes (e.g. their embedding model)")
    args = parser.parse_args()
    settings = load_settings(args.config)
    if args.musique_index:
        run_dataset("MuSiQue dev", args.musique_index, args.data / "musique" / "questions_dev.jsonl", args.repeats,
                    settings)
    if args.hotpot_index:
        run_dataset("HotpotQA dev", args.hotpot_index, args.data / "hotpotqa" / "questions_dev.jsonl", args.repeats,
                    settings)


if __name__ == "__main__":
    main()
