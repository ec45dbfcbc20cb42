"""Random walk with restart to extract a local subgraph (ToPG's GExtract): exact (power iteration over
the whole graph) or by residual push (work bounded by the push tolerance, whatever the graph's size)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from thinkgraph.graph.local_ppr import LocalGraph, local_ppr
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


def push_subgraph(
    graph: LocalGraph,
    seeds: Sequence[int],
    size: int,
    *,
    restart: float = 0.15,
    eps: float = 1e-5,
    limit: int | None = None,
) -> np.ndarray:
    """``rwr_subgraph`` by residual push (``graph.local_ppr``): the random walk with restart from
    ``seeds`` is approximated within ``eps`` per unit of degree, so the work depends on ``eps`` and
    not on the size of the graph. Only rows below ``limit`` are candidates (the walk may pass through
    the others: on a bipartite graph of propositions and their connectors, the propositions).
    Returns the sorted rows of at most ``size`` candidates, seeds first, then by score; nodes the
    push does not reach are never included."""
    if size <= 0 or len(seeds) == 0:
        return np.zeros(0, dtype=np.int64)
    seed_set = np.unique(np.asarray(seeds, dtype=np.int64))
    nodes, scores = local_ppr(graph, dict.fromkeys(seed_set.tolist(), 1.0), damping=1.0 - restart, eps=eps)
    if limit is not None:
        keep = nodes < limit
        nodes, scores = nodes[keep], scores[keep]
    if len(seed_set) >= size:
        score = dict(zip(nodes.tolist(), scores.tolist(), strict=True))
        order = sorted(seed_set.tolist(), key=lambda s: -score.get(s, 0.0))
        return np.sort(np.asarray(order[:size], dtype=np.int64))
    others = nodes[~np.isin(nodes, seed_set)][: size - len(seed_set)]  # ``nodes`` is sorted by score
    return np.sort(np.concatenate([seed_set, others]))
