"""Personalized PageRank by power iteration on a sparse matrix."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from thinkgraph.graph.matrix import row_normalize


def personalized_pagerank(
    adjacency: sp.spmatrix,
    personalization: np.ndarray,
    *,
    damping: float = 0.85,
    tol: float = 1e-8,
    max_iter: int = 200,
    transition: sp.csr_matrix | None = None,
) -> np.ndarray:
    """Stationary distribution of: follow an out-edge with probability ``damping``, else jump to
    ``personalization``. Dangling nodes jump to ``personalization`` (as networkx does).

    ``transition`` may pass a precomputed row-stochastic matrix (rows may be zero for dangling nodes),
    e.g. ToPG's query-aware M; then ``adjacency`` is ignored.
    """
    p = np.asarray(personalization, dtype=np.float64).ravel()
    n = p.shape[0]
    if p.sum() <= 0 or np.any(p < 0):
        raise ValueError("personalization must be non-negative with a positive sum")
    p = p / p.sum()
    P = transition if transition is not None else row_normalize(adjacency)
    if P.shape != (n, n):
        raise ValueError(f"matrix shape {P.shape} does not match personalization length {n}")
    PT = sp.csr_matrix(P.T)
    dangling = np.asarray(P.sum(axis=1)).ravel() < 1e-12
    x = p.copy()
    for _ in range(max_iter):
        dangling_mass = x[dangling].sum()
        x_next = damping * (PT @ x + dangling_mass * p) + (1.0 - damping) * p
        err = np.abs(x_next - x).sum()
        x = x_next
        if err < n * tol:
            break
    return x / x.sum()
