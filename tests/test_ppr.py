"""PPR solvers against networkx: conjugate gradients on undirected graphs (float64 and the float32
row-block path), the operator kept on the matrix, the n-independent stop rule, local push."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from thinkgraph.graph import ppr
from thinkgraph.graph.local_ppr import LocalGraph, local_ppr
from thinkgraph.graph.matrix import build_graph_matrix


def random_graph(n: int, p: float, seed: int) -> nx.Graph:
    g = nx.gnp_random_graph(n, p, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.uniform(0.1, 2.0))
    g.add_nodes_from(range(n))
    return g


def reference(g: nx.Graph, pers: np.ndarray, damping: float) -> np.ndarray:
    ref = nx.pagerank(g, alpha=damping, personalization=dict(enumerate(pers)), tol=1e-14, max_iter=5000)
    return np.array([ref[i] for i in range(g.number_of_nodes())])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_undirected_cg_matches_networkx(seed: int, damping: float) -> None:
    g = random_graph(80, 0.04, seed)  # sparse: isolated and dangling-free components
    rng = np.random.default_rng(seed)
    pers = rng.random(80) * (rng.random(80) < 0.3)
    pers[0] += 1.0
    a = nx.to_scipy_sparse_array(g, nodelist=range(80), weight="weight", format="csr")
    op = ppr.build_operator(a)
    assert op.symmetric is not None  # the CG path
    ours = ppr.personalized_pagerank(a, pers, damping=damping, tol=1e-13, max_iter=1000)
    np.testing.assert_allclose(ours, reference(g, pers, damping), atol=1e-9)


def test_float32_row_blocks_agree_within_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ppr, "FAST_NNZ", 10)
    g = random_graph(300, 0.03, 5)
    a = nx.to_scipy_sparse_array(g, nodelist=range(300), weight="weight", format="csr")
    op = ppr.build_operator(a)
    assert len(op.blocks) == ppr.SPMV_THREADS and op.blocks[0].dtype == np.float32
    pers = np.zeros(300)
    pers[[3, 7]] = 1.0
    for damping in (0.5, 0.85):
        fast = ppr.solve(op, pers, damping=damping, tol=1e-6)
        assert np.abs(fast - reference(g, pers, damping)).sum() < 1e-5
        # the PageRank equation holds to the tolerance although every vector was float32
        transition = ppr.row_normalize(a)
        residual = fast - (damping * (transition.T @ fast) + (1 - damping) * pers / pers.sum())
        assert np.abs(residual).sum() < 2e-6


def test_operator_is_built_once_per_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    gm = build_graph_matrix(["a", "b", "c"], [("a", "b", 1.0), ("b", "c", 1.0)])
    calls = []
    real = ppr.build_operator
    monkeypatch.setattr(ppr, "build_operator", lambda *a, **k: calls.append(1) or real(*a, **k))
    for _ in range(3):
        ppr.personalized_pagerank(gm.adjacency, gm.vector({"a": 1.0}), damping=0.5)
    assert len(calls) == 1


def test_stop_rule_does_not_loosen_with_n() -> None:
    """The L1 residual is below tol whatever n: the old rule stopped at n·tol."""
    for n in (1_000, 20_000):
        a = sp.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], format="csr")  # a path: slow mixing
        p = np.zeros(n)
        p[0] = 1.0
        x = ppr.personalized_pagerank(a, p, damping=0.85, tol=1e-8, max_iter=10_000)
        deg = np.asarray(a.sum(axis=1)).ravel()
        residual = np.abs(x - (0.85 * (a @ (x / deg)) + 0.15 * p)).sum()
        assert residual < 1e-7


@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_local_push_finds_the_exact_top_ranks(damping: float) -> None:
    g = nx.barabasi_albert_graph(3000, 4, seed=3)  # hubs and a long tail, like entity graphs
    a = nx.to_scipy_sparse_array(g, nodelist=range(3000), format="csr")
    seeds = {10: 1.0, 2000: 2.0}
    pers = np.zeros(3000)
    for node, w in seeds.items():
        pers[node] = w
    exact = reference(g, pers, damping)
    nodes, scores = local_ppr(LocalGraph.of(a), seeds, damping=damping, eps=1e-7)
    assert scores.sum() == pytest.approx(1.0) and np.all(np.diff(scores) <= 0)
    top = set(np.argsort(-exact)[:50].tolist())
    assert len(top & set(nodes[:50].tolist())) >= 48
    np.testing.assert_allclose(scores[:10], exact[nodes[:10]], rtol=1e-2)


def test_local_push_rejects_empty_seeds() -> None:
    with pytest.raises(ValueError):
        local_ppr(LocalGraph.of(sp.eye(3, format="csr")), {})
