"""Which entities each passage contains, and which passages each entity occurs in, as two CSR arrays
(passages in the order of the chunk vectors, entities as rows of the entity-passage graph).

Every retriever reads these: the walk's seed specificity (passages per entity), the second hop's
bridge entities, the chain's neighbouring passages, A2RAG's map-back, the paths shown. They were
Python dictionaries of id strings decoded from JSON in every new process: 14 s of a cold `ask` and
most of a serving worker's 5.5 GB at a million passages. As arrays they are memory-mapped from the
view cache: nothing is decoded, and workers on one machine share the pages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from thinkgraph.retrieval.view_cache import read_array, write_arrays


@dataclass(frozen=True)
class Incidence:
    """Passage rows <-> entity rows. ``passage_ptr``/``passage_entities``: the entity rows of passage
    row i are ``passage_entities[passage_ptr[i]:passage_ptr[i + 1]]``; ``entity_ptr``/``entity_passages``
    the reverse."""

    passage_ptr: np.ndarray
    passage_entities: np.ndarray
    entity_ptr: np.ndarray
    entity_passages: np.ndarray

    @classmethod
    def build(cls, rows: np.ndarray, cols: np.ndarray, passages: int, entities: int) -> Incidence:
        """From (passage row, entity row) pairs as two arrays; repeated pairs count once, rows in
        ascending order."""
        matrix = sp.csr_matrix((np.ones(rows.shape[0], dtype=np.int8), (rows, cols)), shape=(passages, entities))
        matrix.sum_duplicates()
        matrix.sort_indices()
        transposed = matrix.T.tocsr()
        transposed.sort_indices()
        return cls(matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32),
                   transposed.indptr.astype(np.int64), transposed.indices.astype(np.int32))

    @property
    def passages(self) -> int:
        return int(self.passage_ptr.shape[0] - 1)

    @property
    def entities(self) -> int:
        return int(self.entity_ptr.shape[0] - 1)

    def entities_of(self, passage: int) -> np.ndarray:
        return self.passage_entities[self.passage_ptr[passage]:self.passage_ptr[passage + 1]]

    def passages_of(self, entity: int) -> np.ndarray:
        return self.entity_passages[self.entity_ptr[entity]:self.entity_ptr[entity + 1]]

    def passage_count(self, entity: int) -> int:
        return int(self.entity_ptr[entity + 1] - self.entity_ptr[entity])

    def save(self, folder: Path) -> None:
        write_arrays(folder, passage_ptr=self.passage_ptr, passage_entities=self.passage_entities,
                     entity_ptr=self.entity_ptr, entity_passages=self.entity_passages)

    @classmethod
    def load(cls, folder: Path) -> Incidence:
        out = cls(*(read_array(folder, key) for key in ("passage_ptr", "passage_entities", "entity_ptr",
                                                        "entity_passages")))
        if out.passage_ptr[-1] != out.passage_entities.shape[0] or out.entity_ptr[-1] != out.entity_passages.shape[0]:
            raise ValueError("passage-entity arrays of different lengths")
        return out


class PassageEntities:
    """The incidence read by id: the entity ids of a passage, the passage ids of an entity."""

    def __init__(self, incidence: Incidence, passage_ids: Sequence[str], passage_rows: Mapping[str, int],
                 entity_ids: Sequence[str], entity_rows: Mapping[str, int]) -> None:
        self.incidence = incidence
        self._passage_ids, self._passage_rows = passage_ids, passage_rows
        self._entity_ids, self._entity_rows = entity_ids, entity_rows

    def entities(self, passage_id: str) -> list[str]:
        row = self._passage_rows.get(passage_id)
        return [] if row is None else [self._entity_ids[int(e)] for e in self.incidence.entities_of(row)]

    def passages(self, entity_id: str) -> list[str]:
        row = self._entity_rows.get(entity_id)
        return [] if row is None else [self._passage_ids[int(p)] for p in self.incidence.passages_of(row)]

    def passage_count(self, entity_id: str) -> int:
        row = self._entity_rows.get(entity_id)
        return 0 if row is None else self.incidence.passage_count(row)
