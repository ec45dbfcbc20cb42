"""How often the sentences a citation shows hold the answer: for each dev question, the gold answer
(or an alias) as a case-insensitive substring of the sentences shown for `ppr`'s top 5 passages, with
no LLM (the shown sentences are then what a reader has), beside the whole passages (the ceiling) and,
with --baseline, another version of thinkgraph/citations.py (e.g. the one before a change).

    git show 8fde32b:src/thinkgraph/citations.py > /tmp/citations_before.py
    python benchmarks/citation_focus.py --musique-index musique.db --hotpot-index hotpot_spacy.db \\
        --baseline /tmp/citations_before.py

(The indexes are built as benchmarks/retrieval_compare.py says.)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph import citations  # noqa: E402
from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402

Focus = Callable[[str, str], tuple[int, int] | None]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("citations_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def focus_of(module: ModuleType) -> Focus:
    """The span a version of citations.py shows for a passage (its best span, or its best sentence)."""
    if hasattr(module, "best_span"):
        return lambda text, q: module.best_span(text, q) or module.lead_sentence(text)
    return lambda text, q: module.best_sentence(text, q)


def measure(index: Path, questions_file: Path, focuses: dict[str, Focus]) -> dict[str, tuple[float, float]]:
    questions = [json.loads(x) for x in questions_file.read_text(encoding="utf-8").splitlines() if x.strip()]
    hits = dict.fromkeys(focuses, 0)
    lengths: dict[str, float] = dict.fromkeys(focuses, 0.0)
    with ThinkGraph(index, settings=Settings()) as tg:
        for q in questions:
            cited = tg.ask(q["question"], "ppr", top_k=5).citations
            texts = {n.id: n.text for n in tg.store.get_nodes([c.chunk_id for c in cited])}
            golds = [_norm(g) for g in [q["answer"], *q.get("answer_aliases", [])] if g]
            for name, focus in focuses.items():
                shown = []
                for c in cited:
                    text = texts[c.chunk_id]
                    span = focus(text, q["question"])
                    shown.append(text[span[0]:span[1]] if span else text)
                joined = _norm(" ".join(shown))
                hits[name] += any(g in joined for g in golds)
                lengths[name] += sum(map(len, shown)) / max(len(shown), 1)
    n = len(questions)
    return {name: (100 * hits[name] / n, lengths[name] / n) for name in focuses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--musique-index", type=Path)
    parser.add_argument("--hotpot-index", type=Path)
    parser.add_argument("--baseline", type=Path, help="another citations.py to compare with")
    args = parser.parse_args()
    focuses: dict[str, Focus] = {"sentences shown (this version)": focus_of(citations)}
    if args.baseline:
        focuses[f"sentences shown ({args.baseline.name})"] = focus_of(_load(args.baseline))
    focuses["whole passages (ceiling)"] = lambda text, q: None
    sets: list[tuple[str, Any, Path]] = [
        ("MuSiQue dev", args.musique_index, args.data / "musique/questions_dev.jsonl"),
        ("HotpotQA dev", args.hotpot_index, args.data / "hotpotqa/questions_dev.jsonl")]
    print("| set | shown | gold answer in the shown text (%) | mean characters per passage |")
    print("|---|---|---|---|")
    for name, index, questions in sets:
        if index is None:
            continue
        for label, (share, length) in measure(index, questions, focuses).items():
            print(f"| {name} | {label} | {share:.1f} | {length:.0f} |")


if __name__ == "__main__":
    main()
