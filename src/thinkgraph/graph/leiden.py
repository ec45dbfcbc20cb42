"""Hierarchical Leiden communities with a maximum cluster size (as ToG-3 and GraphRAG use)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Community:
    id: int
    level: int
    members: tuple[int, ...]
    parent: int | None


def _leiden(n: int, edges: Sequence[tuple[int, int]], weights: Sequence[float], seed: int,
            resolution: float = 1.0) -> list[list[int]]:
    import igraph as ig  # imported here: igraph pulls in matplotlib (~1 s), which `ask` never needs
    import leidenalg

    graph = ig.Graph(n=n, edges=list(edges), directed=False)
    w = list(weights) if weights else None
    if resolution == 1.0:
        partition = leidenalg.find_partition(graph, leidenalg.ModularityVertexPartition, weights=w, seed=seed)
    else:
        partition = leidenalg.find_partition(graph, leidenalg.RBConfigurationVertexPartition, weights=w,
                                             seed=seed, resolution_parameter=resolution)
    return [list(c) for c in partition if c]


# Modularity never splits a clique; when a community over the size bound does not split, the
# resolution is raised (RB configuration model) until it yields a split with a non-trivial part;
# if none does (near-cliques), members are cut in breadth-first order into pieces of the bound.
_SPLIT_RESOLUTIONS = (1.1, 1.25, 1.5, 2.0, 3.0)


def _bfs_pieces(n: int, edges: Sequence[tuple[int, int]], size: int) -> list[list[int]]:
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    order: list[int] = []
    seen = [False] * n
    for start in range(n):
        if seen[start]:
            continue
        seen[start] = True
        queue = [start]
        while queue:
            node = queue.pop(0)
            order.append(node)
            for other in sorted(neighbours[node]):
                if not seen[other]:
                    seen[other] = True
                    queue.append(other)
    return [order[i:i + size] for i in range(0, n, size)]


# A split must shrink the community: a partition whose largest part keeps more than this share of
# the members (a big part and a few shaved-off nodes) would only add a level holding the same
# community again, a chain of near-copies each needing its own summary.
MAX_KEPT_SHARE = 0.8


def _shrinks(parts: list[list[int]], n: int) -> bool:
    largest = max((len(p) for p in parts), default=n)
    return len(parts) > 1 and 1 < largest <= MAX_KEPT_SHARE * n


def _split(n: int, edges: Sequence[tuple[int, int]], weights: Sequence[float], seed: int,
           max_size: int) -> list[list[int]]:
    parts = _leiden(n, edges, weights, seed)
    for resolution in _SPLIT_RESOLUTIONS:
        if _shrinks(parts, n):
            return parts
        parts = _leiden(n, edges, weights, seed, resolution)
    if _shrinks(parts, n):
        return parts
    return _bfs_pieces(n, edges, max_size)


def hierarchical_leiden(
    n: int,
    edges: Sequence[tuple[int, int]],
    weights: Sequence[float] | None = None,
    *,
    max_cluster_size: int = 5,
    seed: int = 42,
    min_size: int = 2,
) -> list[Community]:
    """Leiden (modularity) on the graph; each community larger than ``max_cluster_size`` is
    partitioned again on its induced subgraph, one level deeper. Communities smaller than
    ``min_size`` (isolated nodes) are dropped."""
    weight_list = list(weights) if weights is not None else [1.0] * len(edges)
    adjacency: dict[int, list[tuple[int, float]]] = {}
    for (a, b), w in zip(edges, weight_list, strict=True):
        adjacency.setdefault(a, []).append((b, w))
        adjacency.setdefault(b, []).append((a, w))
    result: list[Community] = []
    stack: list[tuple[list[int], int, int | None]] = [(list(range(n)), 0, None)]
    while stack:
        members, level, parent = stack.pop()
        local = {node: i for i, node in enumerate(members)}
        sub_edges: list[tuple[int, int]] = []
        sub_weights: list[float] = []
        for node in members:
            for other, w in adjacency.get(node, ()):
                j = local.get(other)
                if j is not None and local[node] < j:
                    sub_edges.append((local[node], j))
                    sub_weights.append(w)
        if parent is None:
            parts = _leiden(len(members), sub_edges, sub_weights, seed)
        else:
            parts = _split(len(members), sub_edges, sub_weights, seed, max_cluster_size)
        for part in parts:
            nodes = tuple(sorted(members[i] for i in part))
            if len(nodes) < min_size:
                continue
            community = Community(id=len(result), level=level, members=nodes, parent=parent)
            result.append(community)
            if len(nodes) > max_cluster_size:
                stack.append((list(nodes), level + 1, community.id))
    return result
