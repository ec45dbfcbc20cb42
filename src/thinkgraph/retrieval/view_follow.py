"""View items that follow the index's change log (``ChangeLog`` in store/base.py) from the last revision
kept in the view cache, instead of reading every row of the index again: a node type's vectors, the
entity-passage and entity graphs and the passage-entity incidence (5.3 s of the 7.6 s a view took
after adding 100 documents to 100k passages, reading 790k edges, 150k vectors and every node id).

Each revision's folder names the log position it was built at (``origin.json``); what was touched
after it (nodes, edges by their two ends, vectors) is read from the store and only those rows: a pair
of nodes an edge between which was touched has its entries summed again from the edges between them
now, a node gone loses its row, a new node gains one with all its edges. Where the log does not reach
back (an index copied, a log started later, a revision without a position), the item is built whole."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path

import numpy as np

from thinkgraph.graph.matrix import Adjacency, GraphMatrix
from thinkgraph.models import Edge, EdgeType
from thinkgraph.retrieval.id_table import IdTable, encode_ids
from thinkgraph.retrieval.incidence import Incidence
from thinkgraph.retrieval.sparse_extend import extend_matrix
from thinkgraph.retrieval.view_cache import UNREADABLE, ViewCache, read_array
from thinkgraph.retrieval.view_items import read_graph
from thinkgraph.store.base import ChangeSet

Pair = tuple[str, str]


class ChangeFollower:
    """The items of the revision ``cache`` holds, carried from an earlier revision of the same index."""

    def __init__(self, cache: ViewCache) -> None:
        self.cache = cache
        self.store = cache.store
        self._changes: dict[Path, ChangeSet | None] = {}

    def _earlier(self, item: str) -> Iterator[tuple[Path, ChangeSet]]:
        """This index's earlier revisions that kept ``item``, most recent first, with what the log says
        was touched since each."""
        for folder in self.cache.earlier_folders():
            if not (folder / item).is_dir():
                continue
            if folder not in self._changes:
                position = self.cache.position_of(folder)  # (checked against the folder's revision)
                self._changes[folder] = None if position is None else \
                    self.store.changes_since(position, self.cache.revision_of(folder))
            changes = self._changes[folder]
            if changes is not None:
                yield folder, changes

    def vectors(self, item: str, node_type: str) -> tuple[IdTable, np.ndarray] | None:
        """The earlier vectors but those of touched nodes, then the touched nodes' vectors now."""
        for folder, changes in self._earlier(item):
            try:
                ids, matrix = IdTable.load(folder / item), read_array(folder / item, "matrix")
            except UNREADABLE:
                continue
            if len(ids) != len(matrix):
                continue
            touched = sorted(changes.vectors | changes.nodes)
            new_ids, new_matrix = self.store.get_vectors([node_type], node_ids=touched)
            if not len(ids):  # (none of this type before: every one now was touched since)
                return IdTable(encode_ids(new_ids)), new_matrix
            if new_ids and new_matrix.shape[1] != matrix.shape[1]:
                continue  # (another embedder: the manifest check refuses the view before this)
            keep = IdTable.of(touched).rows_of_table(ids) < 0
            return (IdTable(np.concatenate([np.asarray(ids.ids)[keep], encode_ids(new_ids)])),
                    np.concatenate([np.asarray(matrix[keep], dtype=np.float32),
                                    new_matrix.reshape(-1, matrix.shape[1]).astype(np.float32)]))
        return None

    def graph(self, item: str, node_types: Collection[str], edge_types: Collection[str], *,
              unit: bool) -> GraphMatrix | None:
        """The earlier undirected graph over the nodes of ``node_types`` with the touched pairs' entries
        summed again from their edges of ``edge_types`` now (each counting 1 when ``unit``)."""
        for folder, changes in self._earlier(item):
            try:
                before = read_graph(folder / item)
            except UNREADABLE:
                continue
            if not isinstance(before.ids, IdTable):
                continue
            present = sorted(n.id for n in self.store.get_nodes(sorted(changes.nodes)) if n.type in node_types)
            gone = IdTable.of(sorted(changes.nodes - set(present)))
            added = [node for node, row in zip(present, before.ids.rows_of(present), strict=True) if row < 0]
            ids = IdTable(np.concatenate([np.asarray(before.ids.ids)[gone.rows_of_table(before.ids) < 0],
                                          encode_ids(added)]))
            pairs = self._pairs(changes, added)
            entries = [(e.src, e.dst, 1.0 if unit else float(e.weight)) for e in self._edges(pairs)
                       if e.type in edge_types]
            matrix = extend_matrix(before.adjacency, before.ids, before.ids, ids, ids, pairs, entries, symmetric=True)
            adjacency = Adjacency((matrix.data, matrix.indices, matrix.indptr), shape=matrix.shape)
            return GraphMatrix(ids=ids, adjacency=adjacency, index=ids.rows)
        return None

    def incidence(self, item: str, chunks_item: str, graph_item: str, chunks: IdTable,
                  graph: IdTable) -> Incidence | None:
        """The earlier passage-entity incidence over this revision's passages (``chunks``) and graph rows
        (``graph``), the touched pairs' CONTAINS edges read again."""
        for folder, changes in self._earlier(item):
            try:
                before = Incidence.load(folder / item)
                chunks_before, graph_before = IdTable.load(folder / chunks_item), IdTable.load(folder / graph_item)
            except UNREADABLE:
                continue
            if before.passages != len(chunks_before) or before.entities != len(graph_before):
                continue
            added = [chunks[int(i)] for i in np.flatnonzero(chunks_before.rows_of_table(chunks) < 0)]
            added += [graph[int(i)] for i in np.flatnonzero(graph_before.rows_of_table(graph) < 0)]
            pairs = self._pairs(changes, added)
            entries = [(e.src, e.dst, 1.0) for e in self._edges(pairs) if e.type == EdgeType.CONTAINS]
            ptr = np.asarray(before.passage_ptr)
            earlier = _csr(ptr, np.asarray(before.passage_entities), len(chunks_before), len(graph_before))
            matrix = extend_matrix(earlier, chunks_before, graph_before, chunks, graph, pairs, entries, symmetric=False)
            rows, cols = matrix.nonzero()
            return Incidence.build(rows.astype(np.int64), cols.astype(np.int64), len(chunks), len(graph))
        return None

    def _pairs(self, changes: ChangeSet, added: list[str]) -> list[Pair]:
        """The touched pairs, each once, and every pair a node new to the item has an edge with (its edges
        may be older than the node: the log named only the node)."""
        pairs = {(min(a, b), max(a, b)) for a, b in changes.edges}
        for node in added:
            pairs |= {(min(e.src, e.dst), max(e.src, e.dst)) for e in self.store.edges_of(node)}
        return sorted(pairs)

    def _edges(self, pairs: list[Pair]) -> list[Edge]:
        """Every edge between the two nodes of each pair now (a node's edges to itself too)."""
        edges = self.store.edges_between([(a, b) for a, b in pairs if a != b])
        for node in sorted({a for a, b in pairs if a == b}):
            edges += [e for e in self.store.edges_of(node) if e.src == e.dst == node]
        return edges


def _csr(ptr: np.ndarray, cols: np.ndarray, rows: int, columns: int) -> Adjacency:
    return Adjacency((np.ones(cols.shape[0], dtype=np.float64), cols, ptr), shape=(rows, columns))
