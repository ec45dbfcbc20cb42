"""ToPG's query-aware transition over a proposition graph (ToPG §2.2, eqs. 4-7).

The graph is given as a sparse incidence matrix ``incidence`` (propositions x connectors), where the
connectors are the entities and passages a proposition is linked to. Pure functions, no LLM.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from thinkgraph.graph.matrix import row_normalize


def _without_diagonal(matrix: sp.csr_matrix) -> sp.csr_matrix:
    out = sp.csr_matrix(matrix, copy=True)
    out.setdiag(0.0)
    out.eliminate_zeros()
    return out


def structural_transition(incidence: sp.spmatrix) -> sp.csr_matrix:
    """T_s = Ã(p -> e|P) Ã(e|P -> p) (eq. 5): a step from a proposition to one of its entities or
    passages, then to a proposition sharing it, each step degree-normalised; self-transitions are
    removed and rows renormalised to sum to 1 (rows of isolated propositions stay zero)."""
    b = sp.csr_matrix(incidence, dtype=np.float64)
    b.data[:] = 1.0
    to_connector = row_normalize(b)
    to_proposition = row_normalize(b.T)
    return row_normalize(_without_diagonal(to_connector @ to_proposition))


def semantic_weights(cosine: np.ndarray, theta: float, tau: float) -> np.ndarray:
    """c~ = exp(c / tau) where c >= theta, else 0 (eq. 6)."""
    c = np.asarray(cosine, dtype=np.float64)
    return np.where(c >= theta, np.exp(np.minimum(c, 1.0) / tau), 0.0)


def semantic_transition(structural: sp.spmatrix, weights: np.ndarray) -> sp.csr_matrix:
    """T_n(i, j) = c~_j 1[T_s(i,j) > 0] / sum_k c~_k 1[T_s(i,k) > 0] (eq. 7); no self-transitions."""
    pattern = _without_diagonal(sp.csr_matrix(structural))
    pattern.data[:] = 1.0
    weighted = pattern @ sp.diags(np.asarray(weights, dtype=np.float64))
    weighted.eliminate_zeros()
    return row_normalize(weighted)


def query_aware_transition(incidence: sp.spmatrix, cosine: np.ndarray, *, lam: float, theta: float,
                           tau: float) -> sp.csr_matrix:
    """M = lambda T_s + (1 - lambda) T_n (eq. 4). Where no neighbour of a proposition passes theta,
    its T_n row is empty; that row of M is renormalised (so it follows T_s) to stay stochastic."""
    ts = structural_transition(incidence)
    tn = semantic_transition(ts, semantic_weights(cosine, theta, tau))
    return row_normalize(lam * ts + (1.0 - lam) * tn)
