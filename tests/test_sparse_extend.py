"""extend_matrix (retrieval/sparse_extend.py) against a graph built from scratch (graph/matrix.py
build_graph_matrix, the view's whole build): random graphs, nodes removed and added, edges touched."""

from __future__ import annotations

import random

import pytest
import scipy.sparse as sp

from thinkgraph.graph.matrix import build_graph_matrix
from thinkgraph.retrieval.id_table import IdTable
from thinkgraph.retrieval.sparse_extend import extend_matrix


def _as_dict(ids: list[str] | IdTable, matrix) -> dict[tuple[str, str], float]:  # noqa: ANN001
    coo = matrix.tocoo()
    return {(ids[int(r)], ids[int(c)]): round(float(v), 9) for r, c, v in zip(coo.row, coo.col, coo.data, strict=True)
            if v}


@pytest.mark.parametrize("seed", range(20))
def test_extended_equals_built_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(rng.randint(1, 25))]
    edges = [(rng.choice(nodes), rng.choice(nodes), float(rng.randint(1, 3))) for _ in range(rng.randint(0, 60))]
    before = build_graph_matrix(nodes, edges)
    gone = {n for n in nodes if rng.random() < 0.2}
    added = [f"m{i}" for i in range(rng.randint(0, 5))]
    now_nodes = [n for n in nodes if n not in gone] + added
    keep = [rng.random() < 0.8 for _ in edges]
    kept_edges = [e for e, k in zip(edges, keep, strict=True) if k]
    new_edges = [(rng.choice(now_nodes or ["x"]), rng.choice(now_nodes or ["x"]), float(rng.randint(1, 3)))
                 for _ in range(rng.randint(0, 15))]
    now_edges = kept_edges + new_edges
    # touched: every edge deleted or written, and the edges of new nodes (as the change log names them)
    removed = [e for e, k in zip(edges, keep, strict=True) if not k]
    touched = {(a, b) for a, b, _ in removed + new_edges}
    touched |= {(a, b) for a, b, _ in now_edges if a in added or b in added}
    touched_set = {frozenset(p) for p in touched}
    entries = [e for e in now_edges if frozenset(e[:2]) in touched_set]
    rows_before = IdTable.of(before.ids)
    rows_now = IdTable.of(now_nodes)
    extended = extend_matrix(before.adjacency, rows_before, rows_before, rows_now, rows_now, touched, entries,
                             symmetric=True)
    whole = build_graph_matrix(now_nodes, now_edges)
    assert _as_dict(rows_now, extended) == _as_dict(whole.ids, whole.adjacency)


def test_a_bipartite_matrix_keeps_its_orientation() -> None:
    rows_before, cols_before = IdTable.of(["p1", "p2"]), IdTable.of(["e1", "e2", "e3"])
    before = sp.csr_matrix(([1.0, 1.0], ([0, 1], [0, 2])), shape=(2, 3))  # p1-e1, p2-e3
    rows, cols = IdTable.of(["p2", "p3"]), IdTable.of(["e3", "e1", "e4"])
    out = extend_matrix(before, rows_before, cols_before, rows, cols, [("p3", "e4"), ("e3", "p2")],
                        [("p3", "e4", 1.0)], symmetric=False)
    got = {(rows[int(r)], cols[int(c)]) for r, c in zip(*out.nonzero(), strict=True)}
    assert got == {("p3", "e4")}  # p1 gone; p2-e3 touched (written either way round) and not there now
