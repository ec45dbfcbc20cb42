"""What a chain's answer rests on: on a corpus-built index, the passages the reasoning read and the
passages that mention the entities it touched; on an imported KG, its nodes alone."""

from __future__ import annotations

from thinkgraph.methods.kgr.actions import PASSAGE_TYPE
from thinkgraph.models import Node
from thinkgraph.typedkg import TypedGraph

__all__ = ["MENTIONED_IN", "PASSAGE_TYPE", "chain_nodes", "corpus_built", "grounding_passages"]
MENTIONED_IN = "mentioned_in"  # entity -> passage edges of a corpus-built typed graph
MAX_GROUNDING_PASSAGES = 5


def corpus_built(graph: TypedGraph) -> bool:
    """Whether the typed graph is a corpus-built index's (entities linked to the passages that mention
    them), not an imported KG."""
    return graph.has_edge_type(MENTIONED_IN)


def chain_nodes(graph: TypedGraph, ext_ids: list[str]) -> list[Node]:
    """The nodes of the graph that a chain touched, in the order it touched them."""
    nodes = []
    for ext in ext_ids:
        node = graph.lookup(ext)
        if node is not None:
            nodes.append(Node(ext, graph.node_type(node), graph.text(node)))
    return nodes


def grounding_passages(graph: TypedGraph, nodes: list[Node], limit: int = MAX_GROUNDING_PASSAGES) -> list[str]:
    """The passages an answer rests on, on a corpus-built index: the passage nodes the reasoning read,
    then the passages that mention the entities it touched (those mentioning the most of them
    first). An imported KG has no passages, so its answers cite none (its evidence is the nodes)."""
    read = [n.id for n in nodes if n.type == PASSAGE_TYPE]
    counts: dict[str, int] = {}
    for n in nodes:
        node = graph.lookup(n.id) if n.type != PASSAGE_TYPE else None
        if node is None or MENTIONED_IN not in graph.edge_types_of(node):
            continue
        for p in graph.neighbors(node, MENTIONED_IN):
            ext = graph.ext_id(int(p))
            counts[ext] = counts.get(ext, 0) + 1
    mentioned = sorted((p for p in counts if p not in read), key=lambda p: -counts[p])
    return (read + mentioned)[:limit]
