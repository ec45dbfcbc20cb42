"""Nearest-neighbour search over unit vectors: exact in numpy, HNSW (faiss) above a size.

The HNSW graph is built over 8-bit scalar-quantised copies of the vectors (faiss ``IndexHNSWSQ``): a
quarter of the float32 memory, and only which candidates are looked at is approximate, since every
hit is scored again exactly on the float32 rows. The graph of a matrix memory-mapped from the
retrieval view cache is kept beside it and memory-mapped back (``IO_FLAG_MMAP_IFC``): a new process
opens a million passages' graph in milliseconds instead of reading 1.7 GB into its own memory
(hnswlib, before: 4 s and 1.7 GB per serving worker at a million passages), and workers on one
machine share its pages.

After a change to the index the next revision's graph is the last one's extended
(``EarlierGraph``): the new rows are added, and rows removed or changed since stay in it as waypoints
that a search filters out (``labels``: each HNSW label's row in this matrix, -1 for none), until they
are more than MAX_DEAD of it and the graph is built anew. faiss' HNSW cannot remove a vector; adding is
what building does, one vector at a time, so an extended graph is as good as a new one but for them."""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from thinkgraph.npyfiles import load_npy

log = logging.getLogger(__name__)

# HNSW's parameters (M 16 and efConstruction 200 as hnswlib's defaults that the index used before; a
# search looks at max(ef, k) candidates).
LINKS = 16
EF_CONSTRUCTION = 200
EF_SEARCH = 128
TRAIN_SAMPLE = 100_000  # rows the 8-bit quantiser's per-dimension ranges are learnt from (ours)
ADD_BATCH = 100_000  # rows handed to faiss at a time (bounds the float32 copy of a memory-mapped matrix)
MAX_DEAD = 0.2  # (ours) an extended graph whose removed rows pass this share of it is built anew


@dataclass(frozen=True, slots=True)
class EarlierGraph:
    """The HNSW graph kept beside an earlier revision's matrix, and for each of its labels the row of
    this revision's matrix it stands for (-1: removed or changed since)."""

    path: Path
    rows: npt.NDArray[np.int64]


class VectorIndex:
    def __init__(self, ids: Sequence[str], vectors: np.ndarray, *, ann_threshold: int = 100_000,
                 ef: int = EF_SEARCH, seed: int = 42, position: Mapping[str, int] | None = None,
                 earlier: Callable[[], EarlierGraph | None] | None = None) -> None:
        """``position``: id -> row when the caller has it (ids read as arrays from the view cache).
        ``earlier``: where to find a graph to extend, asked only when there is none kept for this matrix."""
        self.ids = ids
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        _read_at_random(vectors)
        self.position: Mapping[str, int] = position if position is not None else \
            {node_id: i for i, node_id in enumerate(ids)}
        self._ann: Any = None  # (faiss has no usable types)
        self._labels: npt.NDArray[np.int64] | None = None  # HNSW label -> row (None: the same)
        self._dead = 0.0  # the share of an extended graph's labels whose rows are gone (set with _labels)
        self._ef = max(ef, 64)
        self.origin = "exact"  # or how the HNSW graph came: "kept" (read), "extended", "built"
        if len(ids) >= ann_threshold and len(ids) > 0:
            self._ann = self._build_ann(seed, _kept_beside(vectors), earlier)

    def _build_ann(self, seed: int, kept: Path | None = None,
                   earlier: Callable[[], EarlierGraph | None] | None = None) -> Any:
        if kept is not None and (index := self._read_kept(kept)) is not None:
            self.origin = "kept"
            return index
        found = earlier() if earlier is not None else None
        if found is not None and (index := self._extend(found)) is not None:
            self.origin = "extended"
        else:
            index, self.origin = self._build_new(seed), "built"
            self._set_labels(None)
        if kept is not None:
            _keep(index, kept, self._labels)
        return index

    def _read_kept(self, kept: Path) -> Any:
        """The graph kept beside this matrix (an extended one with its labels first), or None."""
        import faiss  # imported here: small indexes never need it

        extended, labels_file = extended_beside(kept)
        for path in (extended, kept):
            if not path.is_file():
                continue
            try:
                index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
                labels = load_labels(labels_file, index.ntotal, len(self.ids)) if path == extended else None
            except (RuntimeError, OSError, ValueError) as exc:  # a torn or foreign file: built again
                log.warning("HNSW index %s unreadable (%s); building it", path, exc)
                continue
            if index.d != self.vectors.shape[1] or (labels is None and index.ntotal != len(self.ids)):
                log.warning("HNSW index %s holds %d vectors for %d; building it", path, index.ntotal, len(self.ids))
                continue
            self._set_labels(labels)
            return index
        return None

    def _extend(self, earlier: EarlierGraph) -> Any:
        """The earlier graph with this matrix's new rows added, or None when it cannot serve (unreadable,
        another dimension, or more than MAX_DEAD of it removed or changed)."""
        import faiss

        rows = np.asarray(earlier.rows, dtype=np.int64)
        try:
            index = faiss.read_index(str(earlier.path))  # into memory: it is extended
        except RuntimeError as exc:
            log.warning("earlier HNSW index %s unreadable (%s); building one", earlier.path, exc)
            return None
        covered = np.zeros(len(self.ids), dtype=bool)
        live = rows[(rows >= 0) & (rows < len(self.ids))]
        covered[live] = True
        added = np.flatnonzero(~covered).astype(np.int64)
        dead = len(rows) - len(live)
        if index.d != self.vectors.shape[1] or index.ntotal != len(rows) or len(np.unique(live)) != len(live) \
                or dead > MAX_DEAD * (len(rows) + len(added)):
            return None
        for start in range(0, len(added), ADD_BATCH):
            index.add(np.ascontiguousarray(self.vectors[added[start:start + ADD_BATCH]]))
        labels = np.concatenate([np.where((rows >= 0) & (rows < len(self.ids)), rows, -1), added])
        # only additions since: label i is row i, as in a graph built over this matrix
        self._set_labels(None if np.array_equal(labels, np.arange(len(self.ids))) else labels)
        log.info("HNSW index extended from %s: %d added, %d dead of %d", earlier.path, len(added), dead,
                 index.ntotal)
        return index

    def _build_new(self, seed: int) -> Any:
        import faiss

        index = faiss.IndexHNSWSQ(self.vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, LINKS,  # type: ignore[arg-type]
                                  faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        sample = np.random.default_rng(seed).choice(len(self.ids), min(len(self.ids), TRAIN_SAMPLE), replace=False)
        index.train(np.ascontiguousarray(self.vectors[np.sort(sample)]))
        for start in range(0, len(self.ids), ADD_BATCH):
            index.add(np.ascontiguousarray(self.vectors[start:start + ADD_BATCH]))
        return index

    @property
    def approximate(self) -> bool:
        return self._ann is not None

    def __len__(self) -> int:
        return len(self.ids)

    def _live_nearest(self, q: np.ndarray, k: int) -> npt.NDArray[np.int64]:
        """The rows of the HNSW graph's nearest labels, at least ``k`` of them where the matrix has
        them: an extended graph's removed rows are filtered, and when they crowd the nearest labels
        (a topic removed whole) the graph is asked for four times as many, up to all of it."""
        total = int(self._ann.ntotal)
        wanted = k if self._labels is None else min(total, k + self._dead_margin(k))
        while True:
            self._ann.hnsw.efSearch = max(self._ef, wanted)
            _, labels = self._ann.search(q.reshape(1, -1), wanted)
            found = labels[0][labels[0] >= 0].astype(np.int64)
            rows = np.unique(found if self._labels is None else self._labels[found])
            rows = rows[rows >= 0]
            if len(rows) >= k or wanted >= total or self._labels is None:
                return rows
            wanted = min(total, 4 * wanted)

    def _set_labels(self, labels: npt.NDArray[np.int64] | None) -> None:
        self._labels = labels
        self._dead = float((labels < 0).mean()) if labels is not None and len(labels) else 0.0

    def _dead_margin(self, k: int) -> int:
        """Extra neighbours asked of an extended graph, for the removed rows among them."""
        return int(np.ceil(2 * self._dead * k)) + (8 if self._dead else 0)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of the query with every vector (exact)."""
        if len(self.ids) == 0:
            return np.zeros(0, dtype=np.float32)
        return self.vectors @ np.asarray(query, dtype=np.float32).ravel()

    def cosines(self, ids: Sequence[str], query: np.ndarray) -> np.ndarray:
        """Cosine of the query with the vectors of ``ids``, in their order (exact); -inf for an id
        without a vector, so that it ranks last."""
        out = np.full(len(ids), -np.inf, dtype=np.float32)
        known = [(i, row) for i, row in ((i, self.position.get(x)) for i, x in enumerate(ids)) if row is not None]
        if known:
            at, rows = zip(*known, strict=True)
            out[list(at)] = self.vectors[list(rows)] @ np.asarray(query, dtype=np.float32).ravel()
        return out

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
            rows = self._live_nearest(q, k)  # (sorted: the rows are read in file order)
            sims = self.vectors[rows] @ q  # exact
            order = np.lexsort((rows, -sims))[:k]
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


def extended_beside(kept: Path) -> tuple[Path, Path]:
    """Where an extended graph and its labels are kept (apart from a graph built over the matrix, so
    that labels never meet a graph they were not written for)."""
    stem = kept.name.removesuffix(".bin")
    return kept.with_name(f"{stem}.extended.bin"), kept.with_name(f"{stem}.extended.labels.npy")


def load_labels(path: Path, labels: int | None, rows: int) -> npt.NDArray[np.int64]:
    """An extended graph's label -> row array, checked against the graph (``labels``: its size, when
    known) and the matrix."""
    array = np.asarray(load_npy(path), dtype=np.int64)
    wrong_size = array.ndim != 1 or (labels is not None and len(array) != labels)
    if wrong_size or (len(array) and (array.max() >= rows or array.min() < -1)):
        raise ValueError(f"{path.name}: labels do not fit a graph of {labels} and a matrix of {rows} rows")
    return array


def _keep(index: Any, kept: Path, labels: npt.NDArray[np.int64] | None) -> None:
    """The graph; an extended one under its own name, after its labels (a reader that finds it finds them)."""
    import faiss

    path, labels_file = extended_beside(kept) if labels is not None else (kept, None)
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    labels_staging = path.with_name(f".{path.name}.{os.getpid()}.labels.tmp.npy")
    try:
        if labels is not None and labels_file is not None:
            np.save(labels_staging, labels, allow_pickle=False)
            os.replace(labels_staging, labels_file)
        faiss.write_index(index, str(staging))
        os.replace(staging, path)  # readers see a whole file or none
    except (OSError, RuntimeError) as exc:  # a read-only or full cache: the next process builds it again
        staging.unlink(missing_ok=True)
        labels_staging.unlink(missing_ok=True)
        log.warning("HNSW index not kept at %s: %s", path, exc)
