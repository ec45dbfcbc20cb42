"""ToPG's query-aware transition over a proposition graph (ToPG §2.2, eqs. 4-7).

The graph is given as a sparse incidence matrix ``incidence`` (propositions x connectors), where the
connectors are the entities and passages a proposition is linked to. Pure functions, no LLM.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from thinkgraph.graph.matrix import row_normalize


def _inverse(sums: np.ndarray) -> np.ndarray:
    """1 / sums, 0 where a sum is 0 (an empty row stays empty). Float always: numpy's bincount of no
    entries (a subgraph whose propositions share no connector) is an integer array."""
    sums = np.asarray(sums, dtype=np.float64)
    inverse: np.ndarray = np.divide(1.0, sums, out=np.zeros_like(sums), where=sums > 0)
    return inverse


def _without_diagonal(matrix: sp.csr_matrix) -> sp.csr_matrix:
    """A copy without its diagonal entries (rows and columns index the same propositions)."""
    m = sp.csr_matrix(matrix)
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    keep = m.indices != rows
    indptr = np.zeros(m.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=m.shape[0]), out=indptr[1:])
    return sp.csr_matrix((m.data[keep], m.indices[keep], indptr), shape=m.shape)


def _used_columns(incidence: sp.spmatrix) -> sp.csr_matrix:
    """The incidence as 0/1 over only the connectors it uses (a subgraph's rows use few of them): the
    same T_s, without carrying every empty column of the whole graph through the products."""
    b = sp.csr_matrix(incidence, dtype=np.float64)
    used, columns = np.unique(b.indices, return_inverse=True)
    return sp.csr_matrix((np.ones(len(columns)), columns.ravel(), b.indptr.copy()), shape=(b.shape[0], len(used)))


def _normalized_rows(matrix: sp.csr_matrix) -> sp.csr_matrix:
    """Rows scaled to sum 1 in place of ``matrix``'s values; all-zero rows stay zero."""
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    matrix.data *= _inverse(np.bincount(rows, weights=matrix.data, minlength=matrix.shape[0]))[rows]
    return matrix


def structural_transition(incidence: sp.spmatrix) -> sp.csr_matrix:
    """T_s = Ã(p -> e|P) Ã(e|P -> p) (eq. 5): a step from a proposition to one of its entities or
    passages, then to a proposition sharing it, each step degree-normalised; self-transitions are
    removed and rows renormalised to sum to 1 (rows of isolated propositions stay zero). The first
    step's 1/deg(p) scales a whole row, which that renormalisation cancels, so it is not applied."""
    b = _used_columns(incidence)
    to_proposition = b.T.tocsr()
    degree = np.diff(to_proposition.indptr)
    to_proposition.data = np.repeat(_inverse(degree.astype(np.float64)), degree)
    return _normalized_rows(_without_diagonal(b @ to_proposition))


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
    # T_n has T_s's pattern (no diagonal, as T_s) weighted by c~ of the target; computed on T_s's
    # entries directly (as semantic_transition, without building the pattern matrix again).
    rows = np.repeat(np.arange(ts.shape[0]), np.diff(ts.indptr))
    weighted = semantic_weights(cosine, theta, tau)[ts.indices]
    tn = weighted * _inverse(np.bincount(rows, weights=weighted, minlength=ts.shape[0]))[rows]
    mixed = lam * ts.data + (1.0 - lam) * tn
    m = sp.csr_matrix((mixed * _inverse(np.bincount(rows, weights=mixed, minlength=ts.shape[0]))[rows],
                       ts.indices.copy(), ts.indptr.copy()), shape=ts.shape)
    m.eliminate_zeros()
    return m




def bipartite_adjacency(incidence: sp.spmatrix) -> sp.csr_matrix:
    """The graph G itself, undirected and unweighted: propositions are rows 0..n-1, connectors
    (entities and passages) rows n..n+m-1, an edge wherever ``incidence`` links the two (GExtract walks
    this graph; T_s is its two-step proposition-to-proposition projection)."""
    b = sp.csr_matrix(incidence, dtype=np.float64)
    b.data[:] = 1.0
    return sp.csr_matrix(sp.bmat([[None, b], [b.T, None]], format="csr"))
