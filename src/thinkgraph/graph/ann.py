"""All pairs of unit vectors whose cosine reaches a threshold, in about n log n: an HNSW graph (faiss)
that later additions join and removals leave as tombstones, so that a change costs what it changes.

The all-pairs product it replaces is quadratic (19k MuSiQue entities: 4.5 s; a million: hours). HNSW
finds each vector's nearest neighbours in about log n; a pair at cosine >= 0.9 is among the very
nearest, so a short list holds it. A query whose whole list is above the threshold (a dense cluster)
is asked again with a longer list until the list ends below it, so no pair is cut off by the list's
length. Identical vectors (two names one encoder cannot tell apart, hash collisions of the hashing
embedder) share one point of the graph: HNSW's neighbour selection keeps one of several equidistant
candidates, so copies inserted as separate points lose each other. Cosines are exact (the graph
keeps the vectors; only which candidates are looked at is approximate): tests/test_synonyms_ann.py
and benchmarks/scale_musique.py compare the pairs with the exact ones."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from thinkgraph.npyfiles import load_npz

# HNSW's parameters (ours, measured on MuSiQue's 19k entity vectors against the exact pairs at 0.9:
# M 16 / efConstruction 80 / efSearch 32 found all 2,036; efConstruction 40 lost one pair of two
# near-duplicates far from every other vector; M 32 cost twice the time for nothing more).
LINKS = 16
EF_CONSTRUCTION = 80
EF_SEARCH = 32
FIRST_K = 16  # neighbours asked for first; a saturated query asks for FIRST_K * GROWTH**i
GROWTH = 4
QUERY_BATCH = 65_536  # queries copied and searched at a time (bounds the memory of a full build)

Pair = tuple[int, int, float]  # (position, position, cosine), first < second
Int64s = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]


def _digest(row: Floats) -> bytes:
    return hashlib.blake2b(row.tobytes(), digest_size=16).digest()


@dataclass
class PairIndex:
    """Vectors at positions 0..n-1 (never reused); ``alive[p]`` False once position p was removed.
    Each position maps to a point of the HNSW graph (``point_of``); identical vectors share a point."""

    index: Any  # faiss.IndexHNSWFlat over the points (faiss's stubs lack most of what is used here)
    point_of: Int64s
    alive: npt.NDArray[np.bool_]
    _points: dict[bytes, int] = field(default_factory=dict)  # digest of a point's vector -> point
    _members: list[list[int]] = field(default_factory=list)  # point -> its positions

    @classmethod
    def empty(cls, dim: int) -> PairIndex:
        import faiss  # imported here: `ask` never needs it

        index = faiss.IndexHNSWFlat(dim, LINKS, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        return cls(index, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))

    @property
    def size(self) -> int:
        return len(self.alive)

    @property
    def points(self) -> int:
        return int(self.index.ntotal)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    @property
    def dead_share(self) -> float:
        return 0.0 if not self.size else 1.0 - float(self.alive.mean())

    def add(self, vectors: Floats) -> Int64s:
        """Append vectors; returns their positions."""
        block = np.ascontiguousarray(vectors, dtype=np.float32)
        start, first_point = self.size, self.points
        points = np.empty(len(block), dtype=np.int64)
        fresh: list[int] = []
        for r, row in enumerate(block):
            digest = _digest(row)
            point = self._points.get(digest)
            if point is None:
                point = self._points[digest] = first_point + len(fresh)
                fresh.append(r)
                self._members.append([])
            self._members[point].append(start + r)
            points[r] = point
        if fresh:
            _one_thread(lambda: self.index.add(np.ascontiguousarray(block[fresh])))
        self.point_of = np.concatenate([self.point_of, points])
        self.alive = np.concatenate([self.alive, np.ones(len(block), dtype=bool)])
        return np.arange(start, self.size, dtype=np.int64)

    def remove(self, positions: Int64s) -> None:
        """Tombstones: HNSW cannot unlink a point, so it stays in the graph as a waypoint (it may still
        stand for other live copies of its vector); removed positions are never returned."""
        self.alive[positions] = False

    def point_vectors(self) -> Floats:
        """Every point's vector, in point order: a view of faiss's own array (no copy), valid while
        this index lives and gains no point."""
        import faiss

        if not self.points:
            return np.zeros((0, self.dim), dtype=np.float32)
        storage: Any = faiss.downcast_index(self.index.storage)
        flat: Floats = faiss.rev_swig_ptr(storage.get_xb(), self.points * self.dim)
        return flat.reshape(self.points, self.dim)

    def vectors(self, positions: Int64s) -> Floats:
        return self.point_vectors()[self.point_of[positions]]

    def pairs_from(self, positions: Int64s, threshold: float) -> list[Pair]:
        """Pairs (a, b, cosine) with cosine >= threshold between the vectors at ``positions`` (already
        added) and every live vector, each pair once, in position order."""
        if not len(positions):
            return []
        points = np.unique(self.point_of[positions])
        found = [self._point_pairs(points[i:i + QUERY_BATCH], threshold) for i in range(0, len(points), QUERY_BATCH)]
        near: dict[int, list[tuple[int, float]]] = {}
        for a, b, cos in zip(*(np.concatenate([f[j] for f in found]).tolist() for j in range(3)), strict=True):
            near.setdefault(a, []).append((b, cos))
        self_cos = np.einsum("ij,ij->i", self.point_vectors()[points], self.point_vectors()[points])
        for point, cos in zip(points.tolist(), self_cos.tolist(), strict=True):
            if cos >= threshold:
                near.setdefault(point, []).append((point, cos))  # the copies of one vector
        pairs: dict[tuple[int, int], float] = {}
        for p in positions.tolist():
            for other_point, cos in near.get(int(self.point_of[p]), ()):
                for q in self._members[other_point]:
                    if q != p and self.alive[q]:
                        pairs.setdefault((p, q) if p < q else (q, p), cos)
        return [(a, b, c) for (a, b), c in sorted(pairs.items())]

    def _point_pairs(self, points: Int64s, threshold: float) -> tuple[Int64s, Int64s, Floats]:
        """(query point, other point, cosine) for the other points at cosine >= threshold."""
        vectors = self.point_vectors()
        k = min(FIRST_K, self.points)
        rows = np.arange(len(points))
        found: list[tuple[Int64s, Int64s, Floats]] = []
        while len(rows) and k > 0:
            me = points[rows]
            sims, hits = self._search(me, vectors[me], k)
            r, c = np.nonzero((hits >= 0) & (sims >= threshold) & (hits != me[:, None]))
            found.append((me[r], hits[r, c], sims[r, c]))
            if k >= self.points:
                break
            rows = rows[sims[:, -1] >= threshold]  # saturated: more pairs may lie past the list's end
            k = min(k * GROWTH, self.points)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return (np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found]),
                np.concatenate([f[2] for f in found]))

    def _search(self, points: Int64s, queries: Floats, k: int) -> tuple[Floats, Int64s]:
        """HNSW's bottom layer searched from each query's own point: the queries are in the graph, so
        the descent from the top layers (which can end far from a vector with no close neighbour) is
        skipped, and the search starts where the pairs are. Parallel over queries (OpenMP)."""
        import faiss

        n = len(queries)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        start = np.ascontiguousarray(points, dtype=np.int32)  # faiss's storage_idx_t
        start_d = -np.einsum("ij,ij->i", queries, queries).astype(np.float32)  # faiss negates similarities
        sims = np.empty((n, k), dtype=np.float32)
        hits = np.empty((n, k), dtype=np.int64)
        params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
        params.efSearch = max(EF_SEARCH, k)
        self.index.search_level_0(n, faiss.swig_ptr(queries), k, faiss.swig_ptr(start), faiss.swig_ptr(start_d),
                                  faiss.swig_ptr(sims), faiss.swig_ptr(hits), 1, 1, params)
        return sims, hits

    # on disk ---------------------------------------------------------------------------------------
    def save(self, stem: Path) -> None:
        """Writes ``stem``.faiss and ``stem``.positions.npz (the caller names the state that uses them)."""
        import faiss

        faiss.write_index(self.index, str(stem.with_suffix(".faiss")))
        np.savez(stem.with_suffix(".positions.npz"), point_of=self.point_of, alive=self.alive)

    @classmethod
    def load(cls, stem: Path) -> PairIndex:
        import faiss

        index: Any = faiss.read_index(str(stem.with_suffix(".faiss")))
        arrays = load_npz(stem.with_suffix(".positions.npz"))
        point_of, alive = arrays["point_of"].astype(np.int64), arrays["alive"].astype(bool)
        if len(point_of) != len(alive) or (len(point_of) and int(point_of.max()) >= int(index.ntotal)):
            raise ValueError(f"{stem}: positions do not match the graph's {index.ntotal} points")
        index.hnsw.efConstruction = EF_CONSTRUCTION
        loaded = cls(index, point_of, alive)
        loaded._members = [[] for _ in range(loaded.points)]
        for position, point in enumerate(point_of.tolist()):
            loaded._members[point].append(position)
        loaded._points = {_digest(row): p for p, row in enumerate(loaded.point_vectors())}
        return loaded


def _one_thread(work: Callable[[], object]) -> None:
    """Insertions one at a time: points inserted by parallel threads at once can miss each other (two
    near-duplicates far from the rest then never link), and the graph, so the pairs, would differ from
    run to run. Searches stay parallel."""
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        work()
    finally:
        faiss.omp_set_num_threads(threads)


def exact_pairs(vectors: Floats, threshold: float, block: int = 2048) -> list[Pair]:
    """The reference: every pair (i < j) with cosine >= threshold, block by block (quadratic)."""
    pairs: list[Pair] = []
    for start in range(0, len(vectors), block):
        sims = vectors[start:start + block] @ vectors.T
        rows, cols = np.nonzero(sims >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            if start + r < c:
                pairs.append((start + r, c, float(sims[r, c])))
    return pairs
