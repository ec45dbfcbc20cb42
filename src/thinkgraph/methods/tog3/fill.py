"""The passages that fill tog3's final reader past its subgraphs' own (``reader_fill = "walk"``, ours): the
shared walk (`ppr`'s personalized PageRank over entities and passages, retrieval/seeded_walk.py)
restarted at the entities the trajectory's first passages mention, the passage at rank r weighing
1 / r**2, with the question's passage prior.

App. A's Retriever finds the nodes nearest the (evolved) query; on a bridge question they are the first
hop's, and the bridge's own passage, which the question does not resemble, is two steps away through the
entity both name. With a small model the query seldom evolves toward it (the Reflector judges the first
round sufficient, or the horizon is 1)."""

from __future__ import annotations

from collections.abc import Sequence

from thinkgraph.methods.tog3.agents import Retriever
from thinkgraph.retrieval.fusion import filled
from thinkgraph.retrieval.seeded_walk import FILL_DEPTH, FILL_RANK_POWER, rank_weighted, walked_passages


def walk_filled(retriever: Retriever, question: str, own: Sequence[str]) -> list[str]:
    """The passages the final reader reads: as many as the trajectory's own (``context_passages`` at least),
    its own up to all but ``reader_fill_passages`` and the walk's from the entities of its first
    ``context_passages``, in the order ``fusion.filled`` gives: its first, the walk's, then its others."""
    c, view = retriever.config, retriever.view
    mentions = view.passage_entities.entities
    seeds = rank_weighted(own[: c.context_passages], mentions, FILL_RANK_POWER)
    walked = walked_passages(view, retriever.settings, seeds, question, view.embed_query(question), FILL_DEPTH)
    return filled(own, walked, max(len(own), c.context_passages), c.reader_fill_passages)
