"""Random walk with restart to extract a local subgraph (ToPG's GExtract)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from thinkgraph.graph.ppr import personalized_pagerank


def rwr_subgraph(
    adjacency: sp.spmatrix,
    seeds: Sequence[int],
    size: int,
    *,
    restart: float = 0.15,
    tol: float = 1e-8,
) -> np.ndarray:
    """Row indices of at most ``size`` nodes with the highest random-walk-with-restart score from
    ``seeds`` (restart probability ``restart``); seeds always included, unreachable nodes never."""
    if size <= 0 or len(seeds) == 0:
        return np.zeros(0, dtype=np.int64)
    n = adjacency.shape[0]
    personalization = np.zeros(n)
    personalization[list(seeds)] = 1.0
    scores = personalized_pagerank(adjacency, personalization, damping=1.0 - restart, tol=tol)
    seed_set = np.unique(np.asarray(seeds, dtype=np.int64))
    if len(seed_set) >= size:
        order = seed_set[np.argsort(-scores[seed_set], kind="stable")]
        return np.sort(order[:size])
    scores = scores.copy()
    scores[seed_set] = np.inf
    reachable = np.flatnonzero(scores > 0)
    top = reachable[np.argsort(-scores[reachable], kind="stable")[:size]]
    return np.sort(top)
