"""Sparse adjacency with a mapping between string node ids and matrix rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp


class Adjacency(sp.csr_matrix):  # type: ignore[misc]  # (scipy.sparse is untyped)
    """A CSR adjacency that keeps what PageRank derives from it (``graph.ppr.operator_of``), so the
    transition is built once per graph instead of on every query. Treat it as immutable."""

    ppr_operator: object | None = None


@runtime_checkable
class BulkPositions(Protocol):
    """An index that finds many ids' rows in one call (the view's id tables: one binary search of all)."""

    def positions(self, node_ids: Sequence[str]) -> list[int]: ...  # the rows of those present, in order


@dataclass(slots=True)
class GraphMatrix:
    ids: Sequence[str]  # a list, or ids read from the view cache as arrays (retrieval/id_table.py)
    adjacency: sp.csr_matrix  # adjacency[i, j] = weight of edge i -> j (an Adjacency when built here)
    index: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.index and len(self.ids):
            self.index = {node_id: i for i, node_id in enumerate(self.ids)}

    @property
    def n(self) -> int:
        return len(self.ids)

    def rows(self, node_ids: Iterable[str]) -> list[int]:
        if isinstance(self.index, BulkPositions):
            return self.index.positions(list(node_ids))
        return [row for i in node_ids if (row := self.index.get(i)) is not None]

    def vector(self, weights: dict[str, float]) -> np.ndarray:
        vec = np.zeros(self.n, dtype=np.float64)
        for node_id, weight in weights.items():
            row = self.index.get(node_id)
            if row is not None:
                vec[row] += weight
        return vec


def build_graph_matrix(
    node_ids: Sequence[str],
    edges: Iterable[tuple[str, str, float]],
    *,
    undirected: bool = True,
) -> GraphMatrix:
    """Adjacency over ``node_ids``; edges naming unknown nodes are ignored, parallel edges summed."""
    ids = list(dict.fromkeys(node_ids))
    index = {node_id: i for i, node_id in enumerate(ids)}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for src, dst, weight in edges:
        i, j = index.get(src), index.get(dst)
        if i is None or j is None:
            continue
        rows.append(i)
        cols.append(j)
        vals.append(weight)
        if undirected and i != j:
            rows.append(j)
            cols.append(i)
            vals.append(weight)
    n = len(ids)
    adjacency = Adjacency((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(n, n))
    adjacency.sum_duplicates()
    return GraphMatrix(ids=ids, adjacency=adjacency, index=index)


def row_normalize(matrix: sp.spmatrix) -> sp.csr_matrix:
    """Rows scaled to sum 1; all-zero rows stay zero (dangling)."""
    csr = sp.csr_matrix(matrix, dtype=np.float64)
    sums = np.asarray(csr.sum(axis=1)).ravel()
    inv = np.divide(1.0, sums, out=np.zeros_like(sums), where=sums > 0)
    return sp.diags(inv) @ csr
