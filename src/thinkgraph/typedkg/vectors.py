"""The vector index over node texts, with faiss: exact inner product for small graphs, and above
``IVF_THRESHOLD`` an inverted-file index with 8-bit scalar quantisation (a quarter of float32's
memory, read memory-mapped) so that a five-million-node graph answers a search in about a millisecond."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import faiss
import numpy as np

from thinkgraph.embed.base import Embedder

IVF_THRESHOLD = 50_000  # nodes; below it exact search is already fast
IVF_NPROBE = 16  # inverted lists visited per query
# k-means training and list assignment dominated the import of large graphs (12 minutes of
# training for a 1M-node import on the shared 2-core machine with 4·√n = 4,000 lists, 40 points per
# list and 25 iterations; assignment costs n x lists dot products): √n lists, 20 points per list
# and 10 iterations cost 40x less to train and 4x less to assign, and a query still scans only
# 16 lists of √n 8-bit codes.
TRAIN_PER_LIST = 20
KMEANS_ITERATIONS = 10
EMBED_BATCH = 4096


def _lists_for(n: int) -> int:
    return int(min(4096, max(64, math.sqrt(n))))


def build_vector_index(path: Path, embedder: Embedder, texts: Sequence[str]) -> None:
    n, dim = len(texts), embedder.dim
    if n < IVF_THRESHOLD:
        index: faiss.Index = faiss.IndexFlatIP(dim)
    else:
        nlist = _lists_for(n)
        quantizer = faiss.IndexFlatIP(dim)  # assignment is one BLAS product per batch
        index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        index.cp.niter = KMEANS_ITERATIONS
        index.cp.min_points_per_centroid = TRAIN_PER_LIST  # (faiss warns below its default of 39)
        sample = np.random.default_rng(0).choice(n, size=min(n, nlist * TRAIN_PER_LIST), replace=False)
        index.train(embedder.embed([texts[i] for i in np.sort(sample)]))
    for start in range(0, n, EMBED_BATCH):
        index.add(np.ascontiguousarray(embedder.embed(list(texts[start:start + EMBED_BATCH])), dtype=np.float32))
    faiss.write_index(index, str(path))


class NodeVectors:
    def __init__(self, path: Path, embedder: Embedder) -> None:
        try:
            self.index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        except RuntimeError:  # index kinds without mmap support are read into memory
            self.index = faiss.read_index(str(path))
        if hasattr(self.index, "nprobe"):
            self.index.nprobe = IVF_NPROBE
        self.embedder = embedder

    def search(self, text: str, k: int) -> list[tuple[int, float]]:
        query = np.ascontiguousarray(self.embedder.embed([text]), dtype=np.float32)
        with one_omp_thread():
            scores, ids = self.index.search(query, k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]


@contextmanager
def one_omp_thread() -> Iterator[None]:
    """One query on one OpenMP thread (the setting is the calling thread's own, restored after): two
    threads gained nothing on an idle 2-core machine, and with the cores busy (an LLM server beside
    the agent) their barrier took RetrieveNode on 20k nodes from 1 ms to 16 ms."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)
