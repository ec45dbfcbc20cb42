"""Evidence retrieval over the index: dense passages and graph-aware (PPR) passages with paths."""

from thinkgraph.retrieval.dense import DenseRetriever
from thinkgraph.retrieval.evidence import Evidence, GraphRetriever, ScoredPassage

__all__ = ["DenseRetriever", "Evidence", "GraphRetriever", "ScoredPassage"]
