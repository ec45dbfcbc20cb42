"""The shared walk (`ppr`'s personalized PageRank over entities and passages, retrieval/graph.py)
started from a method's own seeds rather than from the walk's own linking of the question: A2RAG's
seeds S_V (its stage3="shared_walk" and evidence_order="shared_walk"), the entities a kgr chain reached,
those of topg's first facts and those of tog3's first passages (their readers' fill, reader_fill="walk")."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.graph.topk import top_indices
from thinkgraph.models import NodeType
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.linking import Link
from thinkgraph.retrieval.views import IndexView

T = TypeVar("T")

# The readers' fills (topg's facts, tog3's passages): the item at rank r (from 1) seeds the walk at
# 1 / r**2 (ours; the first items are each method's judgement of what is nearest the question, the lower
# ones name generic entities that spread an even restart), and the walk offers its best FILL_DEPTH
# passages, more than a reader reads.
FILL_RANK_POWER = 2
FILL_DEPTH = 10


@dataclass(frozen=True)
class WalkScores:
    """The shared walk's score of every passage, as the array the walk returned (in the order of the
    chunk vectors): a dict of every passage per question cost more than the walk at scale."""

    ids: Sequence[str]
    position: Mapping[str, int]  # chunk id -> row of ``scores``
    scores: np.ndarray

    def get(self, chunk_id: str) -> float:
        row = self.position.get(chunk_id)
        return 0.0 if row is None else float(self.scores[row])

    def best(self, n: int) -> list[str]:
        """The ``n`` best passages, best first (ties in the vectors' order)."""
        return [self.ids[i] for i in top_indices(self.scores, n)]

    def rank(self, chunk_ids: Iterable[str]) -> list[str]:
        """``chunk_ids`` best first (ties by id)."""
        return sorted(chunk_ids, key=lambda c: (-self.get(c), c))


class SeededWalk(GraphRetriever):
    """`ppr`'s walk whose first-round reset is the given seeds (entity id -> confidence), each divided
    by the number of passages that contain it as the walk weighs its own links (node specificity);
    the rest of the walk (passage prior, second round, fusion) as the [retrieval] settings say."""

    def __init__(self, view: IndexView, settings: RetrievalSettings, seeds: Mapping[str, float]) -> None:
        super().__init__(view, settings)
        count = view.passage_entities.passage_count
        self.seeds = {e: w / max(count(e), 1) for e, w in seeds.items() if w > 0}

    def seed_entities(self, question: str, query_vec: np.ndarray, links: Sequence[Link]) -> dict[str, float]:
        return dict(self.seeds)


def rank_weighted(items: Sequence[T], entities: Callable[[T], Iterable[str]], power: float) -> dict[str, float]:
    """A walk's restart from ranked items (facts, passages): each entity of an item at 1 / r**power for the
    first item (rank r, from 1) that names it."""
    seeds: dict[str, float] = {}
    for rank, item in enumerate(items, 1):
        for entity in entities(item):
            seeds.setdefault(entity, 1.0 / rank ** power)
    return seeds


def walked_passages(view: IndexView, settings: RetrievalSettings, seeds: Mapping[str, float], question: str,
                    query: np.ndarray, depth: int) -> list[str]:
    """The ``depth`` passages the shared walk from ``seeds`` ranks best for the question (``query``: its
    vector), best first, among those it scores above 0 (none without a seed the index knows)."""
    known = view.passage_entities.passage_count
    seeds = {e: w for e, w in seeds.items() if known(e) > 0}
    if not seeds:
        return []
    ranking = SeededWalk(view, settings, seeds).passage_ranking(question, query)
    ids = view.vectors(NodeType.CHUNK).ids
    # (a local walk scores only the passages it reached: the rest, at 0, are not its to rank)
    return [ids[i] for i in top_indices(ranking.scores, depth) if ranking.scores[i] > 0]
