"""Dense passage retrieval: cosine between the question and chunk vectors."""

from __future__ import annotations

from thinkgraph.models import NodeType
from thinkgraph.retrieval.evidence import Evidence, ScoredPassage, passages_from_scores
from thinkgraph.retrieval.views import IndexView


class DenseRetriever:
    name = "dense"

    def __init__(self, view: IndexView) -> None:
        self.view = view

    def retrieve(self, question: str, top_k: int = 5) -> Evidence:
        hits = self.view.vectors(NodeType.CHUNK).search(self.view.embed_query(question), top_k)
        passages: list[ScoredPassage] = passages_from_scores(self.view.store, hits)
        return Evidence(question=question, passages=passages)
