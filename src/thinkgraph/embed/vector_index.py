"""Nearest-neighbour search over unit vectors: exact in numpy, HNSW (faiss) above a size.

The HNSW graph is built over 8-bit scalar-quantised copies of the vectors (faiss ``IndexHNSWSQ``): a
quarter of the float32 memory, and only which candidates are looked at is approximate, since every
hit is scored again exactly on the float32 rows. The graph of a matrix memory-mapped from the
retrieval view cache is kept beside it and memory-mapped back (``IO_FLAG_MMAP_IFC``): a new process
opens a million passages' graph in milliseconds instead of reading 1.7 GB into its own memory
(hnswlib, before: 4 s and 1.7 GB per serving worker at a million passages), and workers on one
machine share its pages."""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# HNSW's parameters (M 16 and efConstruction 200 as hnswlib's defaults that the index used before; a
# search looks at max(ef, k) candidates).
LINKS = 16
EF_CONSTRUCTION = 200
EF_SEARCH = 128
TRAIN_SAMPLE = 100_000  # rows the 8-bit quantiser's per-dimension ranges are learnt from (ours)
ADD_BATCH = 100_000  # rows handed to faiss at a time (bounds the float32 copy of a memory-mapped matrix)


class VectorIndex:
    def __init__(self, ids: Sequence[str], vectors: np.ndarray, *, ann_threshold: int = 100_000,
                 ef: int = EF_SEARCH, seed: int = 42, position: Mapping[str, int] | None = None) -> None:
        """``position``: id -> row when the caller has it (ids read as arrays from the view cache)."""
        self.ids = ids
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        _read_at_random(vectors)
        self.position: Mapping[str, int] = position if position is not None else \
            {node_id: i for i, node_id in enumerate(ids)}
        self._ann: Any = None  # (faiss has no usable types)
        self._ef = max(ef, 64)
        if len(ids) >= ann_threshold and len(ids) > 0:
            self._ann = self._build_ann(seed, _kept_beside(vectors))

    def _build_ann(self, seed: int, kept: Path | None = None) -> Any:
        import faiss  # imported here: small indexes never need it

        if kept is not None and kept.is_file():
            try:
                index = faiss.read_index(str(kept), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
                if index.ntotal == len(self.ids) and index.d == self.vectors.shape[1]:
                    return index
                log.warning("HNSW index %s holds %d vectors for %d; building it", kept, index.ntotal, len(self.ids))
            except RuntimeError as exc:  # a torn or foreign file: built again below
                log.warning("HNSW index %s unreadable (%s); building it", kept, exc)
        index = faiss.IndexHNSWSQ(self.vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, LINKS,  # type: ignore[arg-type]
                                  faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        sample = np.random.default_rng(seed).choice(len(self.ids), min(len(self.ids), TRAIN_SAMPLE), replace=False)
        index.train(np.ascontiguousarray(self.vectors[np.sort(sample)]))
        for start in range(0, len(self.ids), ADD_BATCH):
            index.add(np.ascontiguousarray(self.vectors[start:start + ADD_BATCH]))
        if kept is not None:
            _keep(index, kept)
        return index

    @property
    def approximate(self) -> bool:
        return self._ann is not None

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of the query with every vector (exact)."""
        if len(self.ids) == 0:
            return np.zeros(0, dtype=np.float32)
        return self.vectors @ np.asarray(query, dtype=np.float32).ravel()

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        rows, sims = self.nearest(query, k)
        return [(self.ids[int(i)], float(s)) for i, s in zip(rows, sims, strict=True)]

    def nearest(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the ``k`` nearest vectors, best first, with their exact cosines (the candidates come
        from HNSW above the threshold)."""
        if k <= 0 or len(self.ids) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        k = min(k, len(self.ids))
        q = np.asarray(query, dtype=np.float32).ravel()
        if self._ann is not None:
            self._ann.hnsw.efSearch = max(self._ef, k)
            _, labels = self._ann.search(q.reshape(1, -1), k)
            rows = np.sort(labels[0][labels[0] >= 0]).astype(np.int64)
            sims = self.vectors[rows] @ q  # exact, reading the rows in file order
            order = np.lexsort((rows, -sims))
            return rows[order], sims[order]
        sims = self.scores(q)
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return top.astype(np.int64), sims[top]


def _read_at_random(vectors: np.ndarray) -> None:
    """A matrix memory-mapped from the view cache is read a few rows at a time, anywhere (a question
    scores a few thousand candidates): without this the kernel reads ahead around every row, and a
    serving worker at a million passages held the whole 1.5 GB file after 200 questions."""
    mapped = getattr(vectors, "_mmap", None) if isinstance(vectors, np.memmap) else None
    if mapped is not None and hasattr(mmap, "MADV_RANDOM"):
        with contextlib.suppress(OSError, ValueError):  # (refused: only the memory it keeps differs)
            mapped.madvise(mmap.MADV_RANDOM)


# The HNSW graph of a matrix memory-mapped from the retrieval view cache is kept beside it: building it
# takes minutes at 10^5-10^6 vectors, in every new process, where mapping it takes milliseconds. The
# cache folder is per content revision, so the file never outlives its vectors.
HNSW_SUFFIX = ".faiss-hnsw-sq8-m16-ef200.bin"


def _kept_beside(vectors: np.ndarray) -> Path | None:
    name = getattr(vectors, "filename", None)
    return Path(f"{name}{HNSW_SUFFIX}") if isinstance(vectors, np.memmap) and name else None


def _keep(index: Any, path: Path) -> None:
    import faiss

    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        faiss.write_index(index, str(staging))
        os.replace(staging, path)  # readers see a whole file or none
    except (OSError, RuntimeError) as exc:  # a read-only or full cache: the next process builds it again
        staging.unlink(missing_ok=True)
        log.warning("HNSW index not kept at %s: %s", path, exc)
