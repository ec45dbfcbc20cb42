"""What a new revision of the view takes from this index's last one in the view cache, instead of
building it from every row again: the HNSW graph of a node type's vectors (extended by
embed/vector_index.py ``EarlierGraph``: after adding 100 documents to 100k passages the view built the
passages' graph anew, about half of its 34 s) and the BM25 term counts of its texts
(``LexicalIndex.extend``: 4.4 s of the rest).

Both are matched to this revision by the vectors item of the same node type: an earlier row counts as
this revision's row of the same id when its vector is unchanged too. A node whose text changes is
encoded again (its vector dropped and rewritten), so an unchanged vector stands for an unchanged
text, and a changed one makes the row count as removed and added."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from thinkgraph.embed.vector_index import HNSW_SUFFIX, EarlierGraph, extended_beside, load_labels
from thinkgraph.retrieval.id_table import IdTable
from thinkgraph.retrieval.lexical import LexicalIndex
from thinkgraph.retrieval.view_cache import UNREADABLE, ViewCache, read_array

COMPARE_BATCH = 65_536  # rows compared at a time (bounds the copies of two memory-mapped matrices)

Rows = npt.NDArray[np.int64]


class EarlierRevisions:
    """The view cache's earlier revisions of one index, seen from the revision ``cache`` holds."""

    def __init__(self, cache: ViewCache) -> None:
        self.cache = cache
        self._moved: dict[tuple[Path, str], Rows] = {}  # (the graph and BM25 compare the same rows)

    def graph(self, item: str, ids: Sequence[str], matrix: np.ndarray) -> EarlierGraph | None:
        """The graph kept for vectors ``item`` in the most recent earlier revision that has one, its
        labels mapped to this revision's rows (-1: gone, or its vector changed)."""
        if not isinstance(ids, IdTable):
            return None
        for folder in self.cache.earlier_folders():
            kept = folder / item / f"matrix.npy{HNSW_SUFFIX}"
            extended, labels_file = extended_beside(kept)
            try:
                if extended.is_file():
                    path, labels = extended, load_labels(labels_file, None, len(IdTable.load(folder / item)))
                elif kept.is_file():
                    path, labels = kept, None
                else:
                    continue
                moved = self.rows_now(folder, item, ids, matrix)
            except UNREADABLE:  # (pruned while read, torn): another revision, or a graph built anew
                continue
            if labels is None:
                return EarlierGraph(path, moved.copy())
            return EarlierGraph(path, np.where(labels >= 0, moved[np.maximum(labels, 0)], -1).astype(np.int64))
        return None

    def lexical(self, vectors_item: str, item: str, ids: Sequence[str],
                matrix: np.ndarray) -> tuple[LexicalIndex, Rows] | None:
        """The BM25 index kept as ``item`` in the most recent earlier revision that has one, and for
        each of its rows (those of that revision's ``vectors_item``) the row now, -1 where gone."""
        if not isinstance(ids, IdTable):
            return None
        for folder in self.cache.earlier_folders():
            if not (folder / item).is_dir():
                continue
            try:
                moved = self.rows_now(folder, vectors_item, ids, matrix)
                return LexicalIndex.load(IdTable.load(folder / vectors_item), folder / item, verify=True), moved
            except UNREADABLE:
                continue
        return None

    def rows_now(self, folder: Path, item: str, ids: IdTable, matrix: np.ndarray) -> Rows:
        """Per row of ``item`` in the revision ``folder``, the row of the same id and vector now (-1
        where the id is gone or its vector changed). Raises what reading a damaged item raises."""
        key = (folder, item)
        if key not in self._moved:
            earlier_ids = IdTable.load(folder / item)
            earlier = read_array(folder / item, "matrix")
            if earlier.shape[1:] != matrix.shape[1:] or len(earlier) != len(earlier_ids):
                raise ValueError(f"{folder / item} does not fit this revision's vectors")
            self._moved[key] = _rows_now(ids, earlier_ids, earlier, matrix)
        return self._moved[key]


def _rows_now(ids: IdTable, earlier_ids: IdTable, earlier: np.ndarray, now: np.ndarray) -> Rows:
    moved = ids.rows_of_table(earlier_ids)
    for start in range(0, len(moved), COMPARE_BATCH):
        part = moved[start:start + COMPARE_BATCH]
        present = np.flatnonzero(part >= 0)
        if len(present):
            changed = np.any(np.asarray(earlier[start + present]) != np.asarray(now[part[present]]), axis=1)
            part[present[changed]] = -1
    return moved
