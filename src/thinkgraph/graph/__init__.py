"""Pure graph algorithms on scipy sparse matrices. Nothing here knows of LLMs or the store."""

from thinkgraph.graph.leiden import Community, hierarchical_leiden
from thinkgraph.graph.matrix import GraphMatrix, build_graph_matrix, row_normalize
from thinkgraph.graph.paths import k_hop, shortest_path
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.graph.walks import rwr_subgraph

__all__ = [
    "Community",
    "GraphMatrix",
    "build_graph_matrix",
    "hierarchical_leiden",
    "k_hop",
    "personalized_pagerank",
    "row_normalize",
    "rwr_subgraph",
    "shortest_path",
]
