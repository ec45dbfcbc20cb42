"""Hierarchical Leiden updated from an earlier build (graph/leiden.py) against networkx's modularity and a
fresh run: untouched communities stay as they were, and the partition is as good as a rebuild's."""

from __future__ import annotations

import networkx as nx
import pytest

from thinkgraph.graph.leiden import Community, WarmStart, hierarchical_leiden, modularity


def _levels(n: int, communities: list[Community]) -> list[list[int]]:
    depth = 1 + max(c.level for c in communities)
    levels = [[-1] * n for _ in range(depth)]
    for c in communities:
        for m in c.members:
            levels[c.level][m] = c.id
    return levels


def _sets(communities: list[Community], level: int | None = None) -> set[frozenset[int]]:
    return {frozenset(c.members) for c in communities if level is None or c.level == level}


def _nx_modularity(graph: nx.Graph, communities: list[Community]) -> float:
    top = [set(c.members) for c in communities if c.level == 0]
    covered = set().union(*top) if top else set()
    return float(nx.community.modularity(graph, top + [{v} for v in graph if v not in covered]))


def _grow(graph: nx.Graph, seed: int) -> tuple[nx.Graph, list[bool]]:
    """Five new nodes tied into block 0 and two new edges inside block 3; which nodes changed."""
    grown = graph.copy()
    n = graph.number_of_nodes()
    for k in range(5):
        grown.add_edges_from([(n + k, (seed + 3 * k) % 30), (n + k, (seed + 3 * k + 1) % 30)])
    grown.add_edges_from([(90, 105), (95, 110)])
    touched = {u for e in set(map(frozenset, grown.edges)) - set(map(frozenset, graph.edges)) for u in e}
    return grown, [v in touched for v in range(grown.number_of_nodes())]


def _run(graph: nx.Graph, warm: WarmStart | None = None, seed: int = 1) -> list[Community]:
    return hierarchical_leiden(graph.number_of_nodes(), list(graph.edges), max_cluster_size=5, seed=seed, warm=warm)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_modularity_matches_networkx(seed: int) -> None:
    graph = nx.gnm_random_graph(80, 300, seed=seed)
    found = _run(graph)
    assert modularity(80, list(graph.edges), None, [c.members for c in found if c.level == 0]) == \
        pytest.approx(_nx_modularity(graph, found), abs=1e-9)


def test_an_unchanged_graph_keeps_its_whole_hierarchy() -> None:
    graph = nx.planted_partition_graph(6, 25, 0.4, 0.02, seed=4)
    first = _run(graph)
    n = graph.number_of_nodes()
    again = _run(graph, WarmStart(_levels(n, first), [False] * n))
    assert _sets(again) == _sets(first)
    assert _sets(_run(graph, WarmStart(_levels(n, first)))) == _sets(first)  # nothing is known: still stable


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_local_change_leaves_untouched_communities_and_keeps_modularity(seed: int) -> None:
    graph = nx.planted_partition_graph(8, 30, 0.35, 0.01, seed=seed)
    before = _run(graph)
    grown, changed = _grow(graph, seed)
    n = grown.number_of_nodes()
    levels = [row + [-1] * (n - len(row)) for row in _levels(graph.number_of_nodes(), before)]
    after = _run(grown, WarmStart(levels, changed))
    untouched = {c for c in _sets(before, 0) if not any(changed[m] for m in c)}
    assert untouched and untouched <= _sets(after, 0)
    for c in after:  # the deeper levels of an untouched community are as they were
        if any(frozenset(c.members) <= u for u in untouched):
            assert frozenset(c.members) in _sets(before)
    fresh = _run(grown)
    assert _nx_modularity(grown, after) >= 0.98 * _nx_modularity(grown, fresh)
    free = _run(grown, WarmStart(levels))  # every node may move
    assert _nx_modularity(grown, free) >= 0.98 * _nx_modularity(grown, fresh)


def test_the_same_input_gives_the_same_communities() -> None:
    graph = nx.powerlaw_cluster_graph(400, 3, 0.2, seed=7)
    assert _sets(_run(graph, seed=5)) == _sets(_run(graph, seed=5))


def test_adjacency_subgraphs_match_networkx() -> None:
    from thinkgraph.graph.adjacency import Adjacency

    graph = nx.gnm_random_graph(120, 500, seed=3)
    for u, v in graph.edges:
        graph[u][v]["weight"] = 1.0 + (u * v) % 5
    edges = list(graph.edges)
    adjacency = Adjacency(120, edges, [graph[u][v]["weight"] for u, v in edges])
    members = list(range(0, 120, 2))
    sub = adjacency.induced(members)
    place = {m: i for i, m in enumerate(members)}
    expected = {tuple(sorted((place[u], place[v]))): w for u, v, w in graph.subgraph(members).edges(data="weight")}
    assert dict(zip(sub.edges, sub.weights, strict=True)) == expected
    unit = [i % 7 for i in range(len(members))]  # member i merged into unit i % 7
    merged, strength, total = adjacency.contracted(members, unit, 7)
    quotient: dict[tuple[int, int], float] = {}
    for (a, b), w in expected.items():
        ua, ub = sorted((unit[a], unit[b]))
        if ua != ub:
            quotient[(ua, ub)] = quotient.get((ua, ub), 0.0) + w
    assert dict(zip(merged.edges, merged.weights, strict=True)) == pytest.approx(quotient)
    assert total == pytest.approx(sum(expected.values()))
    degree = dict(graph.subgraph(members).degree(weight="weight"))
    assert strength == pytest.approx([sum(degree[members[i]] for i in range(len(members)) if unit[i] == u)
                                      for u in range(7)])
