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


def text_scores(view: IndexView, question: str, chunk_ids: list[str], query_vec: np.ndarray | None = None, *,
                words: str | None = None, lexical: bool = True,
                dense_weight: float = HYBRID_DENSE_WEIGHT) -> np.ndarray:
    """The hybrid text score of the given passages among themselves: dense cosine to the question and
    BM25 of ``words`` (the question unless given), min-max fused over these passages as ``passage_scores``
    fuses them over all; -inf for a passage without a vector, so that it ranks last."""
    chunks = view.vectors(NodeType.CHUNK)
    out = np.full(len(chunk_ids), -np.inf, dtype=np.float64)
    placed = [(i, row) for i, c in enumerate(chunk_ids) if (row := chunks.position.get(c)) is not None]
    if not placed:
        return out
    at = np.array([i for i, _ in placed])
    rows = np.array([row for _, row in placed])
    vec = view.embed_query(question) if query_vec is None else query_vec
    dense = chunks.vectors[rows] @ np.asarray(vec, dtype=np.float32).ravel()
    bm25 = view.lexical(NodeType.CHUNK).scores(words or question)[rows] if lexical else None
    out[at] = hybrid_scores(dense, bm25, dense_weight)
    return out


class PassagePrior:
    """The passage prior of one query, in the order of ``view.vectors(CHUNK).ids``: ``passage_scores``
    over every passage (``candidates`` = 0, or as many as the index has), or over candidates only: the
    best ``candidates`` passages by dense search (HNSW on a large index) and as many by BM25, with the
    passages a caller adds (the walk adds those of its seed entities), fused among themselves (min-max
    over that union); every other passage scores 0. No passage outside the union is scored densely."""

    def __init__(self, view: IndexView, question: str, query_vec: np.ndarray, candidates: int = 0, *,
                 lexical: bool = True, dense_weight: float = HYBRID_DENSE_WEIGHT) -> None:
        self.view = view
        self.query_vec = np.asarray(query_vec, dtype=np.float32).ravel()
        self.dense_weight = dense_weight
        chunks = view.vectors(NodeType.CHUNK)
        self.everything = candidates <= 0 or candidates >= len(chunks)
        self._bm25 = view.lexical(NodeType.CHUNK).scores(question) if lexical else None
        if self.everything:
            self._full = hybrid_scores(chunks.scores(self.query_vec), self._bm25, dense_weight)
            return
        rows, _ = chunks.nearest(self.query_vec, candidates)
        if self._bm25 is not None:
            best = top_indices(self._bm25, candidates)
            rows = np.concatenate([rows, best[self._bm25[best] > 0]])
        self._rows = np.unique(rows)

    def candidates(self, extra: np.ndarray | None = None) -> np.ndarray:
        """The passage rows the prior scores (sorted), with ``extra`` among them; every row when it
        covers every passage."""
        if self.everything:
            return np.arange(len(self._full))
        return self._rows if extra is None or not len(extra) else np.union1d(self._rows, extra)

    def best_lexical(self, rows: np.ndarray, k: int) -> np.ndarray:
        """The ``k`` of ``rows`` with the best BM25 scores for this query (the first ``k`` without BM25)."""
        if self._bm25 is None:
            return rows[:k]
        return rows[top_indices(self._bm25[rows], k)]

    def scores(self, extra: np.ndarray | None = None) -> np.ndarray:
        """The prior, with the passage rows ``extra`` among the candidates."""
        return self.scored(extra)[0]

    def scored(self, extra: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """``scores`` and the rows outside which it is 0 (sorted; None when every passage is scored),
        so that a local walk reads its reset from them instead of a pass over every passage."""
        if self.everything:
            return self._full, None
        rows, values = self.sparse(extra)
        out = np.zeros(len(self.view.vectors(NodeType.CHUNK)), dtype=np.float64)
        out[rows] = values
        return out, rows

    def sparse(self, extra: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The candidates' rows (sorted) and their prior (the others have none); only for a prior
        over candidates (``scored`` answers for one over every passage)."""
        rows = self.candidates(extra)
        dense = self.view.vectors(NodeType.CHUNK).vectors[rows] @ self.query_vec
        return rows, hybrid_scores(dense, None if self._bm25 is None else self._bm25[rows], self.dense_weight)


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
