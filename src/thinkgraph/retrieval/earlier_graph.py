"""The last revision's HNSW graph of a node type, found in the view cache, for the new revision's graph
to extend (embed/vector_index.py ``EarlierGraph``): after adding 100 documents to 100k passages the
view built the passages' graph anew (about half of its 34 s)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from thinkgraph.embed.vector_index import HNSW_SUFFIX, EarlierGraph, extended_beside, load_labels
from thinkgraph.retrieval.id_table import IdTable
from thinkgraph.retrieval.view_cache import UNREADABLE, ViewCache, read_array

COMPARE_BATCH = 65_536  # rows compared at a time (bounds the copies of two memory-mapped matrices)


def earlier_graph(cache: ViewCache, item: str, ids: Sequence[str], matrix: np.ndarray) -> EarlierGraph | None:
    """The graph kept for ``item`` in this index's most recent other revision that has one, its labels
    mapped to this revision's rows: an id gone, or whose vector changed (an edited entity, a community
    summarised again), maps to -1."""
    if not isinstance(ids, IdTable):
        return None
    for folder in cache.earlier_folders():
        kept = folder / item / f"matrix.npy{HNSW_SUFFIX}"
        extended, labels_file = extended_beside(kept)
        try:
            earlier_ids = IdTable.load(folder / item)
            earlier_matrix = read_array(folder / item, "matrix")
            if extended.is_file():
                path, labels = extended, load_labels(labels_file, None, len(earlier_ids))
            elif kept.is_file():
                path, labels = kept, np.arange(len(earlier_ids), dtype=np.int64)
            else:
                continue
            if earlier_matrix.shape[1:] != matrix.shape[1:] or len(earlier_matrix) != len(earlier_ids):
                continue
            moved = _rows_now(ids, earlier_ids, earlier_matrix, matrix)
        except UNREADABLE:  # (pruned while read, torn): another revision, or a graph built anew
            continue
        return EarlierGraph(path, np.where(labels >= 0, moved[np.maximum(labels, 0)], -1).astype(np.int64))
    return None


def _rows_now(ids: IdTable, earlier_ids: IdTable, earlier: np.ndarray, now: np.ndarray) -> npt.NDArray[np.int64]:
    """Per earlier row, the row of the same id now, -1 where the id is gone or its vector changed."""
    moved = ids.rows_of_table(earlier_ids)
    for start in range(0, len(moved), COMPARE_BATCH):
        part = moved[start:start + COMPARE_BATCH]
        present = np.flatnonzero(part >= 0)
        if len(present):
            changed = np.any(np.asarray(earlier[start + present]) != np.asarray(now[part[present]]), axis=1)
            part[present[changed]] = -1
    return moved
