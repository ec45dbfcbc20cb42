"""Graph algorithms checked against networkx on random graphs."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from thinkgraph.graph import (
    build_graph_matrix,
    hierarchical_leiden,
    k_hop,
    personalized_pagerank,
    row_normalize,
    rwr_subgraph,
    shortest_path,
)
from thinkgraph.graph.paths import path_in_tree, shortest_path_tree, targeted_tree


def random_digraph(n: int, p: float, seed: int) -> nx.DiGraph:
    g = nx.gnp_random_graph(n, p, seed=seed, directed=True)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.uniform(0.1, 2.0))
    return g


def to_csr(g: nx.DiGraph) -> sp.csr_matrix:
    return nx.to_scipy_sparse_array(g, nodelist=range(g.number_of_nodes()), weight="weight", format="csr")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_ppr_matches_networkx(seed: int, damping: float) -> None:
    g = random_digraph(60, 0.05, seed)  # sparse enough to have dangling nodes
    rng = np.random.default_rng(seed)
    pers = rng.random(60) * (rng.random(60) < 0.2)
    pers[0] += 1.0
    ours = personalized_pagerank(to_csr(g), pers, damping=damping, tol=1e-12, max_iter=1000)
    ref = nx.pagerank(g, alpha=damping, personalization=dict(enumerate(pers)), tol=1e-13, max_iter=1000)
    np.testing.assert_allclose(ours, [ref[i] for i in range(60)], atol=1e-8)


def test_ppr_rejects_bad_personalization() -> None:
    with pytest.raises(ValueError):
        personalized_pagerank(sp.csr_matrix((3, 3)), np.zeros(3))


def test_ppr_with_precomputed_transition() -> None:
    g = random_digraph(30, 0.1, 7)
    pers = np.ones(30)
    a = personalized_pagerank(to_csr(g), pers, damping=0.85, tol=1e-12)
    b = personalized_pagerank(None, pers, damping=0.85, tol=1e-12, transition=row_normalize(to_csr(g)))
    np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k_hop_matches_networkx(seed: int) -> None:
    g = random_digraph(80, 0.03, seed)
    seeds = [0, 5]
    for k in (0, 1, 2, 3):
        ours = k_hop(to_csr(g), seeds, k)
        ref = nx.multi_source_dijkstra_path_length(nx.DiGraph(g.edges), seeds, cutoff=k, weight=None) \
            if g.number_of_edges() else {s: 0 for s in seeds}
        ref = {node: d for node, d in ref.items()}
        for s in seeds:
            ref.setdefault(s, 0)
        assert ours == ref


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_shortest_path_matches_networkx(seed: int, weighted: bool) -> None:
    g = random_digraph(50, 0.06, seed)
    csr = to_csr(g)
    for target in range(1, 50):
        ours = shortest_path(csr, 0, target, weighted=weighted)
        try:
            ref_len = nx.shortest_path_length(g, 0, target, weight="weight" if weighted else None)
        except nx.NetworkXNoPath:
            assert ours is None
            continue
        assert ours is not None and ours[0] == 0 and ours[-1] == target
        for a, b in itertools.pairwise(ours):
            assert g.has_edge(a, b)
        if weighted:
            length = sum(g[a][b]["weight"] for a, b in itertools.pairwise(ours))
            assert length == pytest.approx(ref_len)
        else:
            assert len(ours) - 1 == ref_len


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("max_hops", [None, 0, 1, 3])
def test_shortest_path_tree_hop_distances_match_networkx(seed: int, max_hops: int | None) -> None:
    g = random_digraph(120, 0.02, seed)
    dist, pred = shortest_path_tree(to_csr(g), 0, max_hops=max_hops)
    ref = nx.single_source_shortest_path_length(nx.DiGraph(g.edges), 0, cutoff=max_hops) \
        if g.number_of_edges() else {0: 0}
    ref.setdefault(0, 0)
    assert {i: int(d) for i, d in enumerate(dist) if np.isfinite(d)} == ref
    for node, d in ref.items():  # the predecessor chain is a path of exactly that length
        path = path_in_tree(pred, dist, 0, node)
        assert path is not None and len(path) - 1 == d
        assert all(g.has_edge(a, b) for a, b in itertools.pairwise(path))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("max_hops", [1, 2, 4])
def test_targeted_tree_reaches_its_targets_by_shortest_paths(seed: int, max_hops: int) -> None:
    """Against networkx: every target within ``max_hops`` gets its exact hop distance and a path of that
    length; the search stops at the level of the farthest target (nothing beyond it is reached)."""
    g = random_digraph(150, 0.02, seed)
    ref = nx.single_source_shortest_path_length(nx.DiGraph(g.edges), 0, cutoff=max_hops) \
        if g.number_of_edges() else {0: 0}
    ref.setdefault(0, 0)
    rng = np.random.default_rng(seed)
    targets = rng.choice(150, 6, replace=False).tolist()
    dist, pred = targeted_tree(to_csr(g), 0, targets, max_hops=max_hops)
    for t in targets:
        if t in ref:
            assert dist[t] == ref[t]
            path = path_in_tree(pred, dist, 0, t)
            assert path is not None and len(path) - 1 == ref[t]
            assert all(g.has_edge(a, b) for a, b in itertools.pairwise(path))
        else:
            assert not np.isfinite(dist[t])
    reached = {i: int(d) for i, d in enumerate(dist) if np.isfinite(d)}
    assert all(ref[i] == d for i, d in reached.items())  # every distance it gives is exact
    farthest = max((ref[t] for t in targets if t in ref), default=0)
    if all(t in ref for t in targets):  # all found: no level past the farthest target was expanded
        assert max(reached.values()) <= farthest
    # a level that would read more edges than allowed is not searched: nothing past the levels read
    capped, _ = targeted_tree(to_csr(g), 0, targets, max_hops=max_hops, max_edges=0)
    assert {i for i, d in enumerate(capped) if np.isfinite(d)} == {0}


def test_rwr_subgraph_size_seeds_and_ranking() -> None:
    g = random_digraph(100, 0.05, 11)
    csr = to_csr(g)
    seeds = [3, 7]
    picked = rwr_subgraph(csr, seeds, 20, restart=0.15)
    assert len(picked) <= 20
    assert set(seeds) <= set(picked.tolist())
    pers = {i: (1.0 if i in seeds else 0.0) for i in range(100)}
    ref = nx.pagerank(g, alpha=0.85, personalization=pers, tol=1e-13, max_iter=1000)
    others = sorted((i for i in ref if i not in seeds and ref[i] > 0), key=lambda i: -ref[i])
    # the non-seed members are the highest-scoring non-seeds (ties at the cut aside)
    expected = set(others[: len(picked) - len(seeds)])
    assert len(expected ^ (set(picked.tolist()) - set(seeds))) <= 2


def test_rwr_subgraph_never_includes_unreachable() -> None:
    # two disconnected components
    g = nx.DiGraph([(0, 1), (1, 2), (2, 0), (3, 4), (4, 3)])
    picked = rwr_subgraph(to_csr(g), [0], 10)
    assert set(picked.tolist()) == {0, 1, 2}


def test_build_graph_matrix_undirected_and_unknown_ids() -> None:
    gm = build_graph_matrix(["a", "b", "c"], [("a", "b", 1.0), ("b", "x", 1.0), ("a", "b", 2.0)])
    dense = gm.adjacency.toarray()
    assert dense[0, 1] == 3.0 and dense[1, 0] == 3.0
    assert dense.sum() == 6.0
    assert gm.vector({"c": 2.0, "zz": 1.0}).tolist() == [0.0, 0.0, 2.0]


def planted_partition(blocks: int, size: int, seed: int) -> nx.Graph:
    return nx.planted_partition_graph(blocks, size, 0.9, 0.01, seed=seed)


def test_leiden_recovers_planted_blocks_and_matches_networkx_modularity() -> None:
    g = planted_partition(4, 5, seed=1)
    comms = hierarchical_leiden(g.number_of_nodes(), list(g.edges), max_cluster_size=5, seed=1)
    top = [set(c.members) for c in comms if c.level == 0]
    truth = [set(range(b * 5, b * 5 + 5)) for b in range(4)]
    assert sorted(map(sorted, top)) == sorted(map(sorted, truth))
    ours = nx.community.modularity(g, top)
    ref = max(nx.community.modularity(g, nx.community.louvain_communities(g, seed=s)) for s in range(3))
    assert ours >= ref - 1e-9


def test_leiden_hierarchy_respects_max_cluster_size() -> None:
    g = nx.connected_caveman_graph(6, 8)  # cliques of 8 > max size 5
    comms = hierarchical_leiden(g.number_of_nodes(), list(g.edges), max_cluster_size=5, seed=0)
    by_id = {c.id: c for c in comms}
    leaves = [c for c in comms if not any(o.parent == c.id for o in comms)]
    assert any(c.level >= 1 for c in comms)
    for c in comms:
        if c.parent is not None:
            parent = by_id[c.parent]
            assert set(c.members) <= set(parent.members) and c.level == parent.level + 1
    assert max(len(c.members) for c in leaves) <= 5


def test_leiden_drops_isolated_nodes() -> None:
    comms = hierarchical_leiden(5, [(0, 1), (1, 2)], max_cluster_size=5)
    assert [c.members for c in comms] == [(0, 1, 2)]


def test_hierarchical_leiden_levels_shrink_instead_of_chaining() -> None:
    """Every deeper level splits its parent for real: no child keeps most of its parent's members (the
    old rule accepted a big part plus shaved-off nodes, which built chains of near-copies)."""
    import networkx as nx

    from thinkgraph.graph.leiden import MAX_KEPT_SHARE, hierarchical_leiden

    graph = nx.powerlaw_cluster_graph(600, 2, 0.1, seed=3)
    graph.add_edges_from((600 + i, 0) for i in range(60))  # a hub with pendants: the shape that chained
    communities = hierarchical_leiden(graph.number_of_nodes(), list(graph.edges()), max_cluster_size=5, seed=1)
    by_id = {c.id: c for c in communities}
    for child in communities:
        if child.parent is not None:
            parent = by_id[child.parent]
            assert len(child.members) <= max(MAX_KEPT_SHARE * len(parent.members), 5)
    assert max(c.level for c in communities) <= 8
