"""The typed graph's adjacency: one CSR over all edges, with an edge-type column sorted within each
node's row, so that a graph with tens of thousands of edge types (a corpus-built index has one per
OpenIE predicate and its inverse) is three memory-mapped files, not two per edge type. Graphs written
in the first format (one CSR per edge type) are read with at most ``LEGACY_OPEN_TYPES`` of their
per-type files open at a time."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from thinkgraph.typedkg import layout

Loader = Callable[[str], np.ndarray]
# Per-type CSR pairs of a first-format graph held open at once. Each memory map holds a file
# descriptor: opening all of them ran a 20,126-edge-type graph out of descriptors (`OSError: Too many
# open files` under the default limit of 1,024).
LEGACY_OPEN_TYPES = 64


class Adjacency(Protocol):
    def neighbors(self, node: int, k: int) -> np.ndarray: ...

    def types_of(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """The edge type ids along which ``node`` has neighbours (ascending), and how many each."""
        ...


def edge_type_dtype(types: int) -> type[np.unsignedinteger] | type[np.signedinteger]:
    return np.uint16 if types <= 1 << 16 else np.int32


def write_edges(directory: Path, n: int, src: Sequence[np.ndarray], dst: Sequence[np.ndarray]) -> None:
    """Write per-type edge lists (``src[k]``, ``dst[k]``) as one CSR: rows are source nodes, and a row's
    edges are ordered by edge type, then in the order they were added (a stable sort of the lists
    concatenated in type order)."""
    counts = [len(s) for s in src]
    sources = np.concatenate(src) if counts else np.zeros(0, dtype=np.int32)
    order = np.argsort(sources, kind="stable")
    np.save(directory / layout.EDGE_INDPTR, layout.offsets(np.bincount(sources, minlength=n)))
    del sources
    kinds = np.repeat(np.arange(len(counts), dtype=edge_type_dtype(len(counts))), counts)
    np.save(directory / layout.EDGE_TYPES, kinds[order])
    del kinds
    targets = np.concatenate(dst) if counts else np.zeros(0, dtype=np.int32)
    np.save(directory / layout.EDGE_INDICES, targets[order])


class EdgeTable:
    """One CSR over all edges (format 2): ``indptr`` per node, ``indices`` and ``types`` per edge."""

    def __init__(self, load: Loader) -> None:
        self.indptr = load(layout.EDGE_INDPTR)
        self.indices = load(layout.EDGE_INDICES)
        self.types = load(layout.EDGE_TYPES)

    def _row(self, node: int) -> tuple[int, int]:
        return int(self.indptr[node]), int(self.indptr[node + 1])

    def neighbors(self, node: int, k: int) -> np.ndarray:
        start, end = self._row(node)
        kinds = self.types[start:end]
        lo, hi = np.searchsorted(kinds, k, "left"), np.searchsorted(kinds, k, "right")
        return np.array(self.indices[start + int(lo):start + int(hi)])

    def types_of(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        start, end = self._row(node)
        kinds, counts = np.unique(np.asarray(self.types[start:end]), return_counts=True)
        return kinds.astype(np.int64), counts


class PerTypeFiles:
    """A first-format graph (one ``indptr``/``indices`` pair per edge type under ``csr/``), each pair
    opened when first needed and closed again once ``LEGACY_OPEN_TYPES`` others were opened since."""

    def __init__(self, load: Loader, types: int) -> None:
        self._load, self._count = load, types
        self._open: OrderedDict[int, tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def _pair(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        pair = self._open.pop(k, None)
        if pair is None:
            pair = (self._load(f"{layout.CSR_DIR}/{k}.indptr.npy"), self._load(f"{layout.CSR_DIR}/{k}.indices.npy"))
            while len(self._open) >= LEGACY_OPEN_TYPES:
                self._open.popitem(last=False)  # its memory maps close with their last reference
        self._open[k] = pair
        return pair

    def neighbors(self, node: int, k: int) -> np.ndarray:
        indptr, indices = self._pair(k)
        return np.array(indices[int(indptr[node]):int(indptr[node + 1])])  # a copy: no view keeps the map

    def types_of(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        kinds, counts = [], []
        for k in range(self._count):
            indptr, _ = self._pair(k)
            degree = int(indptr[node + 1] - indptr[node])
            if degree:
                kinds.append(k)
                counts.append(degree)
        return np.array(kinds, dtype=np.int64), np.array(counts, dtype=np.int64)


def open_adjacency(version: int, load: Loader, types: int) -> Adjacency:
    return EdgeTable(load) if version >= layout.EDGE_TABLE_VERSION else PerTypeFiles(load, types)
