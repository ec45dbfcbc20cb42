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


def candidate_passage_scores(view: IndexView, question: str, query_vec: np.ndarray, candidates: int, *,
                             lexical: bool = True, dense_weight: float = HYBRID_DENSE_WEIGHT) -> np.ndarray:
    """``passage_scores`` over the best ``candidates`` passages by dense search and as many by BM25,
    fused among themselves (min-max over that union), zero for every other passage; every passage
    when ``candidates`` is 0 or covers the index. The dense half is a nearest-neighbour search
    (HNSW on a large index), so no passage outside the candidates is scored densely."""
    chunks = view.vectors(NodeType.CHUNK)
    n = len(chunks)
    if candidates <= 0 or candidates >= n:
        return passage_scores(view, question, query_vec, lexical=lexical, dense_weight=dense_weight)
    rows, _ = chunks.nearest(query_vec, candidates)
    bm25_all = view.lexical(NodeType.CHUNK).scores(question) if lexical else None
    if bm25_all is not None:
        best = top_indices(bm25_all, candidates)
        rows = np.union1d(rows, best[bm25_all[best] > 0])
    rows = np.unique(rows)
    dense = chunks.vectors[rows] @ np.asarray(query_vec, dtype=np.float32).ravel()
    out = np.zeros(n, dtype=np.float64)
    out[rows] = hybrid_scores(dense, None if bm25_all is None else bm25_all[rows], dense_weight)
    return out


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
