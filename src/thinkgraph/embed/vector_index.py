"""Nearest-neighbour search over unit vectors: exact in numpy, HNSW (hnswlib) above a size."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


class VectorIndex:
    def __init__(self, ids: list[str], vectors: np.ndarray, *, ann_threshold: int = 100_000,
                 ef: int = 128, seed: int = 42) -> None:
        self.ids = ids
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.position = {node_id: i for i, node_id in enumerate(ids)}
        self._ann = None
        self._ef = max(ef, 64)
        if len(ids) >= ann_threshold and len(ids) > 0:
            self._ann = self._build_ann(ef, seed, _kept_beside(vectors))

    def _build_ann(self, ef: int, seed: int, kept: Path | None = None) -> Any:  # (hnswlib has no types)
        try:
            import hnswlib
        except ImportError:
            log.warning("hnswlib not installed (pip install 'thinkgraph[ann]'); using exact search")
            return None
        index = hnswlib.Index(space="ip", dim=self.vectors.shape[1])
        if kept is not None and kept.is_file():
            try:
                index.load_index(str(kept), max_elements=len(self.ids))
                index.set_ef(max(ef, 64))
                return index
            except RuntimeError as exc:  # a torn or foreign file: built again below
                log.warning("HNSW index %s unreadable (%s); building it", kept, exc)
                index = hnswlib.Index(space="ip", dim=self.vectors.shape[1])
        index.init_index(max_elements=len(self.ids), ef_construction=200, M=16, random_seed=seed)
        index.add_items(self.vectors, np.arange(len(self.ids)))
        index.set_ef(max(ef, 64))
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
        """Rows of the ``k`` nearest vectors, best first, and their cosines (HNSW above the threshold)."""
        if k <= 0 or len(self.ids) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        k = min(k, len(self.ids))
        if self._ann is not None:
            self._ann.set_ef(max(self._ef, k))  # (hnswlib finds at most ef neighbours)
            labels, distances = self._ann.knn_query(np.asarray(query, dtype=np.float32).reshape(1, -1), k=k)
            return labels[0].astype(np.int64), (1.0 - distances[0]).astype(np.float32)
        sims = self.scores(query)
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return top.astype(np.int64), sims[top]


# The HNSW graph of a matrix memory-mapped from the retrieval view cache is kept beside it: building it
# took 41 of the 48 s of a cold `ask` at 100k passages (hnswlib, 100k vectors), in every new process,
# where loading it takes a fraction of a second. The cache folder is per content revision, so the file
# never outlives its vectors.
HNSW_SUFFIX = ".hnsw-m16-ef200.bin"


def _kept_beside(vectors: np.ndarray) -> Path | None:
    name = getattr(vectors, "filename", None)
    return Path(f"{name}{HNSW_SUFFIX}") if isinstance(vectors, np.memmap) and name else None


def _keep(index: Any, path: Path) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        index.save_index(str(staging))
        os.replace(staging, path)  # readers see a whole file or none
    except OSError as exc:  # a read-only or full cache: the next process builds it again
        staging.unlink(missing_ok=True)
        log.warning("HNSW index not kept at %s: %s", path, exc)
