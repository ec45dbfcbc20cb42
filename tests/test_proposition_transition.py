"""ToPG's T_s, T_n and M against dense references computed by hand on small graphs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from thinkgraph.graph.proposition import (
    query_aware_transition,
    semantic_transition,
    semantic_weights,
    structural_transition,
)

# propositions p0..p3; connectors: entities e0, e1 and passages P0, P1 (columns e0, e1, P0, P1)
INCIDENCE = np.array([
    [1, 0, 1, 0],  # p0: e0, P0
    [1, 1, 1, 0],  # p1: e0, e1, P0
    [0, 1, 0, 1],  # p2: e1, P1
    [0, 0, 0, 1],  # p3: P1
], dtype=float)


def dense_ts(b: np.ndarray) -> np.ndarray:
    a1 = b / b.sum(axis=1, keepdims=True)
    a2 = b.T / b.T.sum(axis=1, keepdims=True)
    t = a1 @ a2
    np.fill_diagonal(t, 0.0)
    sums = t.sum(axis=1, keepdims=True)
    return np.divide(t, sums, out=np.zeros_like(t), where=sums > 0)


def test_structural_transition_matches_hand_computation() -> None:
    ts = structural_transition(sp.csr_matrix(INCIDENCE)).toarray()
    np.testing.assert_allclose(ts, dense_ts(INCIDENCE))
    assert np.all(np.diag(ts) == 0)
    np.testing.assert_allclose(ts.sum(axis=1), 1.0)
    # p0 reaches p1 only (through e0 and P0); p3 reaches p2 only (through P1)
    assert ts[0, 1] == pytest.approx(1.0) and ts[3, 2] == pytest.approx(1.0)
    # p1 -> p0 via e0 (1/3 * 1/2) and P0 (1/3 * 1/2); p1 -> p2 via e1 (1/3 * 1/2): renormalised 2/3, 1/3
    assert ts[1, 0] == pytest.approx(2 / 3) and ts[1, 2] == pytest.approx(1 / 3)


def test_semantic_weights_threshold_and_temperature() -> None:
    w = semantic_weights(np.array([0.39, 0.4, 0.9]), theta=0.4, tau=0.1)
    assert w[0] == 0.0 and w[1] == pytest.approx(np.exp(4.0)) and w[2] == pytest.approx(np.exp(9.0))
    assert semantic_weights(np.array([0.5]), theta=0.4, tau=0.5)[0] == pytest.approx(np.exp(1.0))


def test_semantic_transition_follows_ts_pattern_and_weights() -> None:
    ts = structural_transition(sp.csr_matrix(INCIDENCE))
    cos = np.array([0.5, 0.3, 0.8, 0.6])  # p1 below theta
    tn = semantic_transition(ts, semantic_weights(cos, 0.4, 0.1)).toarray()
    w = semantic_weights(cos, 0.4, 0.1)
    pattern = (dense_ts(INCIDENCE) > 0).astype(float)
    expected = pattern * w[None, :]
    sums = expected.sum(axis=1, keepdims=True)
    expected = np.divide(expected, sums, out=np.zeros_like(expected), where=sums > 0)
    np.testing.assert_allclose(tn, expected)
    assert tn[0].sum() == 0.0  # p0's only neighbour p1 is below theta
    assert tn[1, 2] == pytest.approx(w[2] / (w[0] + w[2]))
    assert np.all(np.diag(tn) == 0)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
def test_query_aware_transition_rows_are_stochastic(lam: float) -> None:
    cos = np.array([0.5, 0.3, 0.8, 0.6])
    m = query_aware_transition(sp.csr_matrix(INCIDENCE), cos, lam=lam, theta=0.4, tau=0.1).toarray()
    ts = dense_ts(INCIDENCE)
    tn = semantic_transition(sp.csr_matrix(ts), semantic_weights(cos, 0.4, 0.1)).toarray()
    raw = lam * ts + (1 - lam) * tn
    sums = raw.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m, np.divide(raw, sums, out=np.zeros_like(raw), where=sums > 0))
    nonzero = sums.ravel() > 0
    np.testing.assert_allclose(m.sum(axis=1)[nonzero], 1.0)
    assert np.all(np.diag(m) == 0)
    if lam == 0.5:  # rows with semantic mass mix both components
        assert m[1, 2] == pytest.approx(0.5 * ts[1, 2] + 0.5 * tn[1, 2])
        assert m[0, 1] == pytest.approx(1.0)  # T_n row of p0 is empty: M follows T_s


def test_random_graphs_against_dense_reference() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        b = (rng.random((30, 12)) < 0.15).astype(float)
        b[b.sum(axis=1) == 0, 0] = 1.0
        ts = structural_transition(sp.csr_matrix(b)).toarray()
        np.testing.assert_allclose(ts, dense_ts(b), atol=1e-12)
        cos = rng.uniform(-0.2, 1.0, 30)
        m = query_aware_transition(sp.csr_matrix(b), cos, lam=0.5, theta=0.4, tau=0.1).toarray()
        rows = m.sum(axis=1)
        assert np.all((np.abs(rows - 1) < 1e-9) | (rows == 0)) and np.all(np.diag(m) == 0)


def safe_rows(a: np.ndarray) -> np.ndarray:
    sums = a.sum(axis=1, keepdims=True)
    return np.divide(a, sums, out=np.zeros_like(a), where=sums > 0)


def dense_m(b: np.ndarray, cos: np.ndarray, lam: float, theta: float, tau: float) -> np.ndarray:
    """Eqs. 4-7 written out densely; connectors no proposition uses and isolated propositions allowed."""
    ts = safe_rows(b) @ safe_rows(b.T)
    np.fill_diagonal(ts, 0.0)
    ts = safe_rows(ts)
    w = np.where(cos >= theta, np.exp(np.minimum(cos, 1.0) / tau), 0.0)
    tn = (ts > 0) * w[None, :]
    sums = tn.sum(axis=1, keepdims=True)
    tn = np.divide(tn, sums, out=np.zeros_like(tn), where=sums > 0)
    raw = lam * ts + (1 - lam) * tn
    sums = raw.sum(axis=1, keepdims=True)
    return np.divide(raw, sums, out=np.zeros_like(raw), where=sums > 0)


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_query_aware_transition_on_random_subgraphs_with_unused_connectors(lam: float) -> None:
    rng = np.random.default_rng(7)
    for _ in range(5):
        b = (rng.random((25, 40)) < 0.08).astype(float)  # a subgraph's rows use few of the connectors
        b[:, rng.choice(40, 10, replace=False)] = 0.0
        cos = rng.uniform(-0.2, 1.0, 25)
        m = query_aware_transition(sp.csr_matrix(b), cos, lam=lam, theta=0.4, tau=0.1).toarray()
        np.testing.assert_allclose(m, dense_m(b, cos, lam, 0.4, 0.1), atol=1e-12)


def test_propositions_sharing_no_connector_give_an_all_zero_transition() -> None:
    """Three propositions each with connectors of their own (a small collected set): no step leads
    anywhere, so every row of T_s and M is empty, not a casting error."""
    b = sp.csr_matrix(np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]], dtype=float))
    assert structural_transition(b).nnz == 0
    m = query_aware_transition(b, np.array([0.9, 0.5, 0.1]), lam=0.5, theta=0.4, tau=0.1)
    assert m.shape == (3, 3) and m.nnz == 0


def test_bipartite_adjacency_is_g_with_propositions_first() -> None:
    from thinkgraph.graph.proposition import bipartite_adjacency

    g = bipartite_adjacency(sp.csr_matrix(INCIDENCE * 3.0)).toarray()  # weights do not matter: 0/1 links
    n, m = INCIDENCE.shape
    np.testing.assert_array_equal(g[:n, n:], INCIDENCE)
    np.testing.assert_array_equal(g, g.T)
    assert not g[:n, :n].any() and not g[n:, n:].any()


def test_push_subgraph_keeps_the_seeds_and_the_best_reachable_candidates() -> None:
    import networkx as nx

    from thinkgraph.graph.local_ppr import LocalGraph
    from thinkgraph.graph.walks import push_subgraph

    rng = np.random.default_rng(5)
    b = (rng.random((60, 25)) < 0.08).astype(float)
    b[:30, 20:] = 0.0  # propositions 30-59 and connectors 20-24 form their own component
    b[30:, :20] = 0.0
    adjacency = sp.csr_matrix(np.block([[np.zeros((60, 60)), b], [b.T, np.zeros((25, 25))]]))
    seeds = [int(np.flatnonzero(b[:30].sum(axis=1))[0])]
    picked = push_subgraph(LocalGraph.of(adjacency), seeds, 8, restart=0.15, eps=1e-7, limit=60).tolist()
    assert seeds[0] in picked and len(picked) <= 8 and all(p < 30 for p in picked)  # own component only
    exact = nx.pagerank(nx.from_scipy_sparse_array(adjacency), alpha=0.85, personalization={seeds[0]: 1.0},
                        tol=1e-12, max_iter=1000)
    best = sorted((p for p in range(60) if p != seeds[0] and exact[p] > 1e-12), key=lambda p: -exact[p])
    assert set(picked) - set(seeds) == set(best[: len(picked) - 1])
    assert push_subgraph(LocalGraph.of(adjacency), [], 8).size == 0
