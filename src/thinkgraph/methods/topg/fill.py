"""The passages that fill topg's reader past those of its collected facts (``reader_fill = "walk"``, ours):
the shared walk (`ppr`'s personalized PageRank over entities and passages, retrieval/seeded_walk.py)
restarted at the entities the reader's first facts name, with the question's passage prior.

On a bridge question Suggestion–Selection with a small model stops at the sentence that names the bridge
("Leland is where Maximum Overdrive was filmed"): the next hop, the bridge's own passage, is two steps
away through an entity both name, and the query-aware walk on M prefers a sentence sharing a word of the
question. The shared walk from the facts' entities reaches that passage and weighs it by the question."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.methods.topg.graph import PropositionGraph
from thinkgraph.retrieval.seeded_walk import FILL_DEPTH, FILL_RANK_POWER, rank_weighted, walked_passages
from thinkgraph.retrieval.views import IndexView


def fact_entities(view: IndexView, graph: PropositionGraph, fact: int) -> list[str]:
    """The entities a fact names (those the index knows); when it names none, the entities its passages
    mention."""
    known = view.passage_entities
    row = graph.incidence.indices[graph.incidence.indptr[fact]:graph.incidence.indptr[fact + 1]]
    named = [graph.connectors[j] for j in row if known.passage_count(graph.connectors[j]) > 0]
    return named or [e for chunk in graph.passages[fact] for e in known.entities(chunk)]


def fact_seeds(view: IndexView, graph: PropositionGraph, facts: Sequence[int]) -> dict[str, float]:
    """The walk's restart: each entity of the facts at the weight of the first fact that names it."""
    return rank_weighted(facts, lambda fact: fact_entities(view, graph, fact), FILL_RANK_POWER)


@dataclass
class WalkFill:
    """The ``FILL_DEPTH`` passages the shared walk from the facts' entities ranks best, best first, among
    those it scores above 0 (none when the facts name no entity the index knows)."""

    view: IndexView
    settings: RetrievalSettings
    graph: PropositionGraph
    embed: Callable[[str], np.ndarray]  # the method's question vectors (each embedded once)

    def __call__(self, question: str, facts: Sequence[int]) -> list[str]:
        seeds = fact_seeds(self.view, self.graph, facts)
        return walked_passages(self.view, self.settings, seeds, question, self.embed(question), FILL_DEPTH)
