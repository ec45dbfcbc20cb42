"""What a chain's answer rests on: on a corpus-built index, the passages the reasoning read and the
passages that mention the entities it touched; on an imported KG, its nodes alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from thinkgraph.methods.kgr.names import PASSAGE_TYPE
from thinkgraph.models import Node
from thinkgraph.typedkg import TypedGraph

__all__ = ["MENTIONED_IN", "PASSAGE_TYPE", "Fill", "Relevance", "chain_nodes", "corpus_built", "grounding_passages"]
MENTIONED_IN = "mentioned_in"  # entity -> passage edges of a corpus-built typed graph
MAX_GROUNDING_PASSAGES = 5
# Scores passage ids by their nearness to the question (higher: nearer), one per id.
Relevance = Callable[[Sequence[str]], Sequence[float]]
# The passages, best first, that fill the room a chain's own passages leave, given the nodes it touched.
Fill = Callable[[list[Node]], Sequence[str]]


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


def grounding_passages(graph: TypedGraph, nodes: list[Node], limit: int = MAX_GROUNDING_PASSAGES, *,
                       relevance: Relevance | None = None, neighbourhood: bool = False,
                       fill: Fill | None = None) -> list[str]:
    """The passages an answer rests on, on a corpus-built index: the passage nodes the reasoning read,
    then the passages that mention the entities it touched (those mentioning the most of them first,
    then the nearest the question by ``relevance``); with ``neighbourhood``, the room left is filled
    with the passages that mention the entities one edge from what it reached (an entity's relations, a
    passage's mentions), nearest the question first, where a chain that stopped on a bridge entity finds
    the next hop. With ``fill`` (kgr/fill.py: the shared walk from what the chain reached), the passages
    the reasoning read are followed by those ``fill`` ranks, in its order, in the stead of the mentions
    and the neighbourhood (the mentions only where it ranks too few). An imported KG has no passages,
    so its answers cite none (its evidence is the nodes)."""
    read = [n.id for n in nodes if n.type == PASSAGE_TYPE]
    touched = [node for n in nodes if n.type != PASSAGE_TYPE
               for node in [graph.lookup(n.id)] if node is not None and MENTIONED_IN in graph.edge_types_of(node)]
    if fill is not None:  # the walk weighs the passages of several of the chain's entities itself
        chosen = list(dict.fromkeys([*read, *fill(nodes)]))
        if len(chosen) >= limit:
            return chosen[:limit]
    counts = _mentions(graph, touched)
    others = [p for p in counts if p not in read]
    score = _scores(relevance, others)
    mentioned = sorted(others, key=lambda p: (-counts[p], -score.get(p, 0.0)))
    if fill is not None:
        return list(dict.fromkeys([*chosen, *mentioned]))[:limit]
    chosen = read + mentioned
    if neighbourhood and len(chosen) < limit:
        reached = [node for n in nodes for node in [graph.lookup(n.id)] if node is not None]
        near = _mentions(graph, _related(graph, reached))
        rest = [p for p in near if p not in set(chosen)]
        score = _scores(relevance, rest)
        chosen += sorted(rest, key=lambda p: -score.get(p, 0.0))
    return chosen[:limit]


def _mentions(graph: TypedGraph, entities: list[int]) -> dict[str, int]:
    """Passage id -> how many of ``entities`` it mentions, in the order first met."""
    counts: dict[str, int] = {}
    for node in entities:
        for p in graph.neighbors(node, MENTIONED_IN):
            ext = graph.ext_id(int(p))
            counts[ext] = counts.get(ext, 0) + 1
    return counts


def _related(graph: TypedGraph, reached: list[int]) -> list[int]:
    """The entities one edge from the nodes a chain reached, not themselves: an entity's relations, and
    the entities a passage it read mentions (an entity's own passages are met through ``_mentions``)."""
    own = set(reached)
    found: dict[int, None] = {}
    for node in reached:
        for edge_type in graph.edge_types_of(node):
            if edge_type == MENTIONED_IN:
                continue
            for other in graph.neighbors(node, edge_type):
                other = int(other)
                if other not in own and MENTIONED_IN in graph.edge_types_of(other):
                    found[other] = None
    return list(found)


def _scores(relevance: Relevance | None, ids: list[str]) -> dict[str, float]:
    return dict(zip(ids, (float(x) for x in relevance(ids)), strict=True)) if relevance and ids else {}
