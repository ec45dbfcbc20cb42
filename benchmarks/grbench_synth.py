"""A synthetic GRBench-format academic graph (papers, authors, venues) of a chosen size, written as
GRBench's graph.json: {"paper_nodes": {id: {"features": {...}, "neighbors": {...}}}, "author_nodes": ...}.

    .venv/bin/python benchmarks/grbench_synth.py --nodes 100000 --out /tmp/g100k.json

About 70 % papers (title, year, keywords; 3 authors, 1 venue, 2 references, and the inverse
cited_by), 28 % authors (name, organization; their papers), 2 % venues (name; their papers): about
8.4 neighbour entries per node, so 5 million nodes give about 42 million edges, as GRBench's largest
academic graphs (App. A: 2-6 M nodes, 22-39 M edges)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

AUTHORS_PER_PAPER = 3
REFS_PER_PAPER = 2
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "de", "an", "el", "or", "is", "um", "ber", "gan"]


def words(rng: np.random.Generator, count: int) -> list[str]:
    parts = rng.integers(0, len(_SYLLABLES), size=(count, 3))
    return ["".join(_SYLLABLES[p] for p in row) for row in parts]


def grouped(owner: np.ndarray, member: np.ndarray, n_owner: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR-style grouping of member ids by owner id."""
    order = np.argsort(owner, kind="stable")
    starts = np.zeros(n_owner + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n_owner), out=starts[1:])
    return starts, member[order]


def generate(nodes: int, out: Path, seed: int = 0) -> dict[str, int]:
    rng = np.random.default_rng(seed)
    n_paper, n_venue = int(nodes * 0.70), max(1, int(nodes * 0.02))
    n_author = nodes - n_paper - n_venue
    vocab = words(rng, 5000)
    first, last = words(rng, 400), words(rng, 600)
    paper_authors = rng.integers(0, n_author, size=(n_paper, AUTHORS_PER_PAPER))
    paper_venue = rng.integers(0, n_venue, size=n_paper)
    refs = (np.arange(n_paper)[:, None] - 1 - rng.integers(0, max(1, n_paper // 10), size=(n_paper, REFS_PER_PAPER))) \
        % n_paper  # mostly older papers
    a_starts, a_papers = grouped(paper_authors.ravel(), np.repeat(np.arange(n_paper), AUTHORS_PER_PAPER), n_author)
    v_starts, v_papers = grouped(paper_venue, np.arange(n_paper), n_venue)
    c_starts, c_papers = grouped(refs.ravel(), np.repeat(np.arange(n_paper), REFS_PER_PAPER), n_paper)
    title_words = rng.integers(0, len(vocab), size=(n_paper, 5))
    years = rng.integers(1990, 2025, size=n_paper)
    edges = 0
    with out.open("w", encoding="utf-8") as f:
        f.write('{"paper_nodes": {')
        for i in range(n_paper):
            neighbors = {"author": [f"a{a}" for a in paper_authors[i]], "venue": [f"v{paper_venue[i]}"],
                         "reference": [f"p{r}" for r in refs[i]],
                         "cited_by": [f"p{c}" for c in c_papers[c_starts[i]:c_starts[i + 1]]]}
            edges += sum(map(len, neighbors.values()))
            record = {"features": {"title": " ".join(vocab[w] for w in title_words[i]), "year": int(years[i]),
                                   "keywords": vocab[title_words[i][0]]}, "neighbors": neighbors}
            f.write(("," if i else "") + json.dumps(f"p{i}") + ":" + json.dumps(record))
        f.write('}, "author_nodes": {')
        for i in range(n_author):
            papers = [f"p{p}" for p in a_papers[a_starts[i]:a_starts[i + 1]]]
            edges += len(papers)
            record = {"features": {"name": f"{first[i % 400].title()} {last[(i // 400) % 600].title()}",
                                   "organization": f"{vocab[i % 5000].title()} University"},
                      "neighbors": {"paper": papers}}
            f.write(("," if i else "") + json.dumps(f"a{i}") + ":" + json.dumps(record))
        f.write('}, "venue_nodes": {')
        for i in range(n_venue):
            papers = [f"p{p}" for p in v_papers[v_starts[i]:v_starts[i + 1]]]
            edges += len(papers)
            record = {"features": {"name": f"Conference on {vocab[i % 5000].title()}"}, "neighbors": {"paper": papers}}
            f.write(("," if i else "") + json.dumps(f"v{i}") + ":" + json.dumps(record))
        f.write("}}")
    return {"nodes": n_paper + n_author + n_venue, "edges": edges}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(generate(args.nodes, args.out, args.seed)))


if __name__ == "__main__":
    main()
