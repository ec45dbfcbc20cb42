"""Hybrid passage retrieval: BM25 and dense cosine over the same passages, fused by min-max
normalisation. It is both a baseline method of its own (`hybrid`) and the passage prior that the
graph retrievers start from."""

from __future__ import annotations

import numpy as np

from thinkgraph.graph.topk import top_indices
from thinkgraph.models import NodeType
from thinkgraph.retrieval.evidence import Evidence, passages_from_scores
from thinkgraph.retrieval.fusion import hybrid_scores
from thinkgraph.retrieval.views import IndexView

# The plain hybrid: dense weight 0.7 in min-max score fusion (chosen on the dev sets there).
HYBRID_DENSE_WEIGHT = 0.7


def passage_scores(view: IndexView, question: str, query_vec: np.ndarray, *, lexical: bool = True,
                   dense_weight: float = HYBRID_DENSE_WEIGHT) -> np.ndarray:
    """Fused score in [0, 1] for every passage, in the order of ``view.vectors(CHUNK).ids``."""
    dense = view.vectors(NodeType.CHUNK).scores(query_vec)
    bm25 = view.lexical(NodeType.CHUNK).scores(question) if lexical else None
    return hybrid_scores(dense, bm25, dense_weight)


class HybridRetriever:
    name = "hybrid"

    def __init__(self, view: IndexView, dense_weight: float = HYBRID_DENSE_WEIGHT) -> None:
        self.view = view
        self.dense_weight = dense_weight

    def retrieve(self, question: str, top_k: int = 5) -> Evidence:
        chunks = self.view.vectors(NodeType.CHUNK)
        scores = passage_scores(self.view, question, self.view.embed_query(question), dense_weight=self.dense_weight)
        order = top_indices(scores, top_k)
        hits = [(chunks.ids[i], float(scores[i])) for i in order]
        return Evidence(question=question, passages=passages_from_scores(self.view.store, hits))
