"""The HNSW graph of a memory-mapped matrix (the retrieval view cache's) is kept beside it and read back
by the next process instead of being built again; a torn copy is rebuilt."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from thinkgraph.embed.vector_index import HNSW_SUFFIX, VectorIndex


def _matrix(tmp_path: Path, n: int = 3000, dim: int = 24) -> np.memmap:
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(n, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    np.save(tmp_path / "matrix.npy", rows)
    loaded = np.load(tmp_path / "matrix.npy", mmap_mode="r")
    assert isinstance(loaded, np.memmap)
    return loaded


def test_the_graph_is_kept_beside_the_matrix_and_read_back(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path)
    ids = [f"n{i}" for i in range(len(matrix))]
    first = VectorIndex(ids, matrix, ann_threshold=1000)
    kept = Path(f"{matrix.filename}{HNSW_SUFFIX}")
    assert first.approximate and kept.is_file()
    stamp = kept.stat().st_mtime_ns
    second = VectorIndex(ids, matrix, ann_threshold=1000)
    assert kept.stat().st_mtime_ns == stamp  # read, not written again
    exact = VectorIndex(ids, np.asarray(matrix), ann_threshold=10**9)
    for q in matrix[:50]:
        assert [i for i, _ in second.search(q, 5)] == [i for i, _ in first.search(q, 5)]
        assert second.search(q, 1)[0][0] == exact.search(q, 1)[0][0]


def test_a_torn_copy_is_built_again(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path, 1500)
    kept = Path(f"{matrix.filename}{HNSW_SUFFIX}")
    kept.write_bytes(b"not an index")
    index = VectorIndex([f"n{i}" for i in range(1500)], matrix, ann_threshold=1000)
    assert index.search(matrix[7], 1)[0][0] == "n7"
    assert kept.stat().st_size > 1000


def test_an_array_in_memory_keeps_nothing(tmp_path: Path) -> None:
    matrix = np.asarray(_matrix(tmp_path, 1200))
    VectorIndex([f"n{i}" for i in range(1200)], matrix, ann_threshold=1000)
    assert not list(tmp_path.glob(f"*{HNSW_SUFFIX}"))


def test_cosines_of_given_ids_match_the_exact_product_and_rank_unknown_ids_last(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path, 200)
    index = VectorIndex([f"n{i}" for i in range(len(matrix))], np.asarray(matrix), ann_threshold=10**9)
    query = matrix[7]
    got = index.cosines(["n3", "missing", "n7"], query)
    assert np.allclose(got[[0, 2]], [matrix[3] @ query, matrix[7] @ query]) and got[1] == -np.inf
    assert index.cosines([], query).shape == (0,)
