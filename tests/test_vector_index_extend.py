"""A new revision's HNSW graph extends the last one (embed/vector_index.py ``EarlierGraph``): new rows
added, removed or changed rows filtered out of every search, checked against exact search; built anew
past MAX_DEAD; read back with its labels by the next process."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from thinkgraph.embed.vector_index import HNSW_SUFFIX, MAX_DEAD, EarlierGraph, VectorIndex, extended_beside

DIM = 24


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.normal(size=(n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _mapped(folder: Path, rows: np.ndarray) -> np.memmap:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "matrix.npy", rows)
    loaded = np.load(folder / "matrix.npy", mmap_mode="r")
    assert isinstance(loaded, np.memmap)
    return loaded


def _change(tmp_path: Path, removed: int, changed: int, added: int) -> tuple[VectorIndex, list[str], np.memmap,
                                                                             set[str], set[str]]:
    """An earlier revision of 1,500 rows, and the next: ``removed`` ids gone, ``changed`` with a new
    vector, ``added`` new ones appended (the store's insertion order)."""
    rng = np.random.default_rng(3)
    first = _unit(rng, 1500)
    ids = [f"n{i}" for i in range(1500)]
    built = VectorIndex(ids, _mapped(tmp_path / "a", first), ann_threshold=1000)
    assert built.origin == "built"
    gone = {f"n{i}" for i in range(0, 1500, 1500 // removed)} if removed else set()
    moved = {f"n{i}" for i in range(7, 1500, 1500 // changed) if f"n{i}" not in gone} if changed else set()
    now_ids = [i for i in ids if i not in gone] + [f"m{j}" for j in range(added)]
    rows = {i: first[k] for k, i in enumerate(ids)}
    fresh = iter(_unit(rng, len(moved) + added))
    now = np.stack([next(fresh) if i in moved or i.startswith("m") else rows[i] for i in now_ids])
    matrix = _mapped(tmp_path / "b", now)
    position = {i: r for r, i in enumerate(now_ids)}
    earlier_rows = np.array([-1 if i in gone or i in moved else position[i] for i in ids], dtype=np.int64)
    earlier = EarlierGraph(Path(f"{tmp_path / 'a' / 'matrix.npy'}{HNSW_SUFFIX}"), earlier_rows)
    index = VectorIndex(now_ids, matrix, ann_threshold=1000, earlier=lambda: earlier)
    return index, now_ids, matrix, gone, moved


def _agrees_with_exact(index: VectorIndex, ids: list[str], matrix: np.ndarray, gone: set[str]) -> None:
    exact = VectorIndex(ids, np.asarray(matrix), ann_threshold=10**9)
    queries = [*matrix[::37], *_unit(np.random.default_rng(9), 40)]
    hits = 0
    for q in queries:
        found = [i for i, _ in index.search(q, 10)]
        assert len(found) == 10 and not set(found) & gone
        hits += len(set(found) & {i for i, _ in exact.search(q, 10)})
    assert hits >= 0.97 * 10 * len(queries)


def test_an_extended_graph_searches_as_a_new_one_without_what_left(tmp_path: Path) -> None:
    index, ids, matrix, gone, moved = _change(tmp_path, removed=60, changed=20, added=100)
    assert index.origin == "extended" and index.approximate
    graph, labels = extended_beside(Path(f"{matrix.filename}{HNSW_SUFFIX}"))
    assert graph.is_file() and labels.is_file()
    _agrees_with_exact(index, ids, matrix, gone)
    for i in sorted(moved)[:10]:  # a changed vector is found by its new value
        assert index.search(matrix[ids.index(i)], 1)[0][0] == i
    again = VectorIndex(ids, matrix, ann_threshold=1000)  # the next process reads graph and labels
    assert again.origin == "kept"
    for q in matrix[:30]:
        assert again.search(q, 5) == index.search(q, 5)


def test_additions_alone_keep_a_plain_graph(tmp_path: Path) -> None:
    index, ids, matrix, gone, _ = _change(tmp_path, removed=0, changed=0, added=120)
    graph, labels = extended_beside(Path(f"{matrix.filename}{HNSW_SUFFIX}"))
    assert index.origin == "extended" and not graph.exists() and not labels.exists()
    assert Path(f"{matrix.filename}{HNSW_SUFFIX}").is_file()
    _agrees_with_exact(index, ids, matrix, gone)
    assert VectorIndex(ids, matrix, ann_threshold=1000).origin == "kept"


def test_a_graph_mostly_gone_is_built_anew(tmp_path: Path) -> None:
    index, ids, matrix, gone, _ = _change(tmp_path, removed=int(1500 * MAX_DEAD) + 100, changed=0, added=0)
    assert index.origin == "built"
    _agrees_with_exact(index, ids, matrix, gone)


def test_labels_that_do_not_fit_are_not_used(tmp_path: Path) -> None:
    index, ids, matrix, _, _ = _change(tmp_path, removed=60, changed=0, added=10)
    graph, labels = extended_beside(Path(f"{matrix.filename}{HNSW_SUFFIX}"))
    np.save(labels, np.arange(5, dtype=np.int64))  # torn or foreign
    again = VectorIndex(ids, matrix, ann_threshold=1000)
    assert again.origin == "built" and again.search(matrix[3], 1)[0][0] == ids[3]


def test_a_topic_removed_whole_still_leaves_k_results(tmp_path: Path) -> None:
    """The rows nearest a question all removed (near-duplicates of one topic): the search asks the
    graph for more until it has k live rows, as a graph built without them would give."""
    rng = np.random.default_rng(5)
    base = _unit(rng, 1200)
    topic = base[0] + 0.05 * _unit(rng, 200)  # 200 near-duplicates of one row
    first = np.vstack([base, topic / np.linalg.norm(topic, axis=1, keepdims=True)]).astype(np.float32)
    ids = [f"n{i}" for i in range(len(first))]
    VectorIndex(ids, _mapped(tmp_path / "a", first), ann_threshold=1000)
    now = _mapped(tmp_path / "b", first[:1200])  # the topic (rows 1200-1399) leaves
    rows = np.array([i if i < 1200 else -1 for i in range(len(first))], dtype=np.int64)
    earlier = EarlierGraph(Path(f"{tmp_path / 'a' / 'matrix.npy'}{HNSW_SUFFIX}"), rows)
    index = VectorIndex(ids[:1200], now, ann_threshold=1000, earlier=lambda: earlier)
    assert index.origin == "extended"
    exact = VectorIndex(ids[:1200], np.asarray(now), ann_threshold=10**9)
    for k in (5, 10, 50):
        found = index.search(first[1250], k)
        assert len(found) == k and not {i for i, _ in found} & set(ids[1200:])
        assert found[0][0] == exact.search(first[1250], 1)[0][0]
