"""LLM-free second hop of graph retrieval: what the question asks once its first hop is found.

- The residual question: the question without the names of the entities its first-hop passages
  contain. The second walk's passage prior is computed from it, so that the second hop's passage
  is matched on what the question asks of the bridge ("who was president when ... became a
  state") rather than on the first entity's name, which every first-hop look-alike shares.
- The chain: the passage ranked second is the best passage that shares an entity with the one
  ranked first, scored equally by the residual question and by the walk (a beam of width one
  over passage chains, as multi-hop dense retrievers do with an encoder trained for it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from thinkgraph.retrieval.fusion import min_max
from thinkgraph.retrieval.linking import Link, strip_mentions
from thinkgraph.retrieval.views import IndexView


def residual_question(question: str, links: Sequence[Link], found_entities: Iterable[str]) -> str:
    """``question`` without the mentions of the linked entities among ``found_entities``."""
    found = set(found_entities)
    return strip_mentions(question, [link.mention for link in links if link.entity_id in found])


def chain_second(view: IndexView, scores: np.ndarray, residual_scores: np.ndarray) -> np.ndarray:
    """``scores`` (over the passages, in the order of the chunk vectors) with the chained passage
    lifted to second place: among the passages sharing an entity with the best one, the one with
    the highest sum of min-max-normalised residual and walk scores. Unchanged when the best passage
    shares no entity with another passage, or when the chained passage is already second."""
    if len(scores) < 3:
        return scores
    incidence = view.incidence
    first = int(np.argmax(scores))
    entities = incidence.entities_of(first)
    rows = np.unique(np.concatenate([incidence.passages_of(int(e)) for e in entities])) if len(entities) else \
        np.zeros(0, dtype=np.int64)
    rows = rows[rows != first]
    if not len(rows):
        return scores
    chained = int(rows[np.argmax(min_max(residual_scores[rows]) + min_max(scores[rows]))])
    runner_up = float(np.max(np.delete(scores, first)))
    if scores[chained] >= runner_up or scores[first] <= runner_up:  # already second, or a tie for first
        return scores
    lifted = scores.copy()
    lifted[chained] = (scores[first] + runner_up) / 2.0  # between the first and the old second
    return lifted
