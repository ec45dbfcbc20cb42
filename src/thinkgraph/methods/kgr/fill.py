"""The passages that fill kgr's reader past what its chain reached (``reader_fill = "walk"``, ours): the
shared walk (`ppr`'s personalized PageRank over entities and passages, retrieval/seeded_walk.py)
restarted at the entities the chain touched, with the question's passage prior.

A chain of a small model often stops one hop short (on the bridge entity, or on a passage that names
it) or wanders to a neighbour that shares a word with the question; the passages one relation away hold
the next hop only when the graph has that relation. The walk spreads from everything the chain reached
at once and weighs where it arrives by the question, so the passage two steps away through an entity
both name ("Maximum Overdrive", between Leland's passage and the film's own) comes first."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.methods.kgr.grounding import PASSAGE_TYPE, Fill
from thinkgraph.models import Node
from thinkgraph.retrieval.seeded_walk import walked_passages
from thinkgraph.retrieval.views import IndexView
from thinkgraph.typedkg import TypedGraph

MENTIONS = "mentions"  # passage -> entity edges of a corpus-built typed graph


def chain_seeds(graph: TypedGraph, nodes: Sequence[Node]) -> list[str]:
    """The entities a chain touched, in its order; when it touched none, those its passages mention."""
    entities = [n.id for n in nodes if n.type != PASSAGE_TYPE]
    if entities:
        return list(dict.fromkeys(entities))
    found: dict[str, None] = {}
    for n in nodes:
        node = graph.lookup(n.id)
        if node is not None:
            found.update((graph.ext_id(int(e)), None) for e in graph.neighbors(node, MENTIONS))
    return list(found)


def walk_fill(view: IndexView, settings: RetrievalSettings, graph: TypedGraph, question: str,
              query: np.ndarray, depth: int) -> Fill:
    """The ``depth`` passages the shared walk from a chain's entities ranks best, best first, among those
    it scores above 0 (none when the chain reached no entity that the index knows); ``query``: the
    question's vector."""
    def fill(nodes: list[Node]) -> Sequence[str]:
        seeds = dict.fromkeys(chain_seeds(graph, nodes), 1.0)
        return walked_passages(view, settings, seeds, question, query, depth)
    return fill
