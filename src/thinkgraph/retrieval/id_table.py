"""Node ids as arrays: the position of an id among millions without a Python dictionary.

A view of a million-passage index holds 3 million ids (passages twice, entities twice, facts); as
Python lists and dictionaries they took 1.4 s to build in every new process and about 400 MB of each
serving worker. Here the ids are UTF-8 bytes in a numpy array, with a sorted copy and its order, all
memory-mapped from the view cache: an id is found by binary search, a position read back by decoding
one entry, and nothing is built until asked."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt

from thinkgraph.retrieval.view_cache import read_array, write_arrays

_ARRAYS = ("ids", "sorted_ids", "order")


def encode_ids(ids: Iterable[str]) -> npt.NDArray[np.bytes_]:
    encoded = [i.encode("utf-8") for i in ids]
    return np.array(encoded, dtype=bytes) if encoded else np.zeros(0, dtype="S1")


class IdTable(Sequence[str]):
    """Ids in their order (``table[i]``), and their positions (``table.rows``: a read-only mapping)."""

    def __init__(self, ids: npt.NDArray[np.bytes_], sorted_ids: npt.NDArray[np.bytes_] | None = None,
                 order: npt.NDArray[np.int64] | None = None) -> None:
        if sorted_ids is None or order is None:
            order = np.argsort(ids, kind="stable").astype(np.int64)
            sorted_ids = ids[order]
        self.ids, self.sorted_ids, self.order = ids, sorted_ids, order
        self.rows = IdRows(self)

    @classmethod
    def of(cls, ids: Iterable[str]) -> IdTable:
        return cls(encode_ids(ids))

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [bytes(x).decode("utf-8") for x in self.ids[i]]
        return bytes(self.ids[int(i)]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for x in self.ids:
            yield bytes(x).decode("utf-8")

    def row(self, node_id: str) -> int | None:
        key = node_id.encode("utf-8")
        at = int(np.searchsorted(self.sorted_ids, key))
        if at < len(self) and bytes(self.sorted_ids[at]) == key:
            return int(self.order[at])
        return None

    def rows_of(self, node_ids: Sequence[str]) -> npt.NDArray[np.int64]:
        """The positions of ``node_ids`` in one binary search of them all (-1 where absent)."""
        if not node_ids or not len(self):
            return np.full(len(node_ids), -1, dtype=np.int64)
        encoded = [i.encode("utf-8") for i in node_ids]
        # numpy's byte strings drop trailing NULs: "a\0" would read as "a"
        return self._search(np.array(encoded, dtype=bytes), np.array([not k.endswith(b"\0") for k in encoded]))

    def rows_of_table(self, other: IdTable) -> npt.NDArray[np.int64]:
        """The position here of each of ``other``'s ids, in its order (-1 where absent), compared as the
        stored bytes: no id is decoded."""
        if not len(other) or not len(self):
            return np.full(len(other), -1, dtype=np.int64)
        return self._search(np.asarray(other.ids), True)

    def _search(self, keys: npt.NDArray[np.bytes_], usable: npt.NDArray[np.bool_] | bool) -> npt.NDArray[np.int64]:
        at = np.minimum(np.searchsorted(self.sorted_ids, keys), len(self) - 1)
        return np.where((self.sorted_ids[at] == keys) & usable, self.order[at], -1).astype(np.int64)

    def save(self, folder: Path) -> None:
        write_arrays(folder, ids=self.ids, sorted_ids=self.sorted_ids, order=self.order)

    @classmethod
    def load(cls, folder: Path) -> IdTable:
        table = cls(*(read_array(folder, name) for name in _ARRAYS))
        if not table.ids.shape[0] == table.sorted_ids.shape[0] == table.order.shape[0]:
            raise ValueError("id arrays of different lengths")
        return table


class IdRows(Mapping[str, int]):
    """An ``IdTable``'s id -> position, as the dictionary it replaces reads."""

    def __init__(self, table: IdTable) -> None:
        self._table = table

    def __getitem__(self, node_id: str) -> int:
        row = self._table.row(node_id)
        if row is None:
            raise KeyError(node_id)
        return row

    def get(self, node_id: str, default: int | None = None) -> int | None:  # type: ignore[override]
        row = self._table.row(node_id)
        return default if row is None else row

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and self._table.row(node_id) is not None

    def positions(self, node_ids: Sequence[str]) -> list[int]:
        """The positions of those of ``node_ids`` present, in their order (``graph.matrix.BulkPositions``)."""
        return [int(r) for r in self._table.rows_of(node_ids) if r >= 0]

    def __len__(self) -> int:
        return len(self._table)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)
