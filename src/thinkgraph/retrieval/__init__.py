"""Evidence retrieval over the index: dense passages and graph-aware (PPR) passages with paths."""

from thinkgraph.retrieval.dense import DenseRetriever
from thinkgraph.retrieval.evidence import Evidence, ScoredPassage
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.hybrid import HybridRetriever

__all__ = ["DenseRetriever", "Evidence", "GraphRetriever", "HybridRetriever", "ScoredPassage"]
