"""How the view cache keeps the vectors of a node type and a graph: numpy arrays beside the ids
(retrieval/id_table.py), read back memory-mapped."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from thinkgraph.graph.matrix import Adjacency, GraphMatrix
from thinkgraph.retrieval.id_table import IdTable
from thinkgraph.retrieval.view_cache import read_array, write_arrays


def read_vectors(folder: Path) -> tuple[Sequence[str], np.ndarray]:
    ids = IdTable.load(folder)
    matrix = read_array(folder, "matrix")
    if len(ids) != len(matrix):
        raise ValueError(f"{len(ids)} ids for {len(matrix)} vectors")
    return ids, matrix


def write_vectors(value: tuple[Sequence[str], np.ndarray], folder: Path) -> None:
    ids, matrix = value
    (ids if isinstance(ids, IdTable) else IdTable.of(ids)).save(folder)
    write_arrays(folder, matrix=np.asarray(matrix, dtype=np.float32))


def read_graph(folder: Path) -> GraphMatrix:
    ids = IdTable.load(folder)
    n = len(ids)
    adjacency = Adjacency((read_array(folder, "data"), read_array(folder, "indices"), read_array(folder, "indptr")),
                          shape=(n, n))
    return GraphMatrix(ids=ids, adjacency=adjacency, index=ids.rows)


def write_graph(graph: GraphMatrix, folder: Path) -> None:
    (graph.ids if isinstance(graph.ids, IdTable) else IdTable.of(graph.ids)).save(folder)
    csr = graph.adjacency
    write_arrays(folder, data=csr.data, indices=csr.indices, indptr=csr.indptr)
