"""Synonym pairs from the HNSW graph (graph/ann.py) against the exact all-pairs reference, the rule that
numbers and dates never link, and the synonym stage kept up to date by what changed (index/resolve.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkgraph.graph.ann import PairIndex, exact_pairs
from thinkgraph.index.resolve import (
    SynonymUpdate,
    date_key,
    exact_synonym_pairs,
    may_link,
    update_synonyms,
    word_cosine,
)
from thinkgraph.index.synonym_state import state_folder
from thinkgraph.models import Edge, Node
from thinkgraph.store.sqlite import SQLiteStore


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered(n: int, dim: int, seed: int) -> np.ndarray:
    """Random directions, near-duplicate pairs and triples among them, a tight cluster of 60 (more than
    one search list holds), exact copies, and two near-duplicates far from everything else."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, dim))
    for i in range(0, n // 2, 7):  # near-duplicates of earlier rows
        base[n // 2 + i // 7] = base[i] + rng.normal(scale=0.15, size=dim)
    centre = rng.normal(size=dim)
    base[-80:-20] = centre + rng.normal(scale=0.05, size=(60, dim))
    base[-20:-15] = base[3]  # five exact copies of one vector
    lonely = rng.normal(size=dim) * 5
    base[-2], base[-1] = lonely, lonely + rng.normal(scale=0.3, size=dim)
    return _unit(base)


def _pairs(found: list[tuple[int, int, float]]) -> set[tuple[int, int]]:
    return {(a, b) for a, b, _ in found}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hnsw_pairs_equal_the_exact_pairs(seed: int) -> None:
    vectors = clustered(3000, 48, seed)
    index = PairIndex.empty(48)
    found = index.pairs_from(index.add(vectors), 0.9)
    exact = exact_pairs(vectors, 0.9)
    assert len(exact) > 1800  # the dense cluster alone has 60 * 59 / 2 pairs
    assert _pairs(found) == _pairs(exact)
    cosines = {(a, b): c for a, b, c in exact}
    assert all(abs(c - cosines[(a, b)]) < 1e-5 for a, b, c in found)


def test_pairs_found_batch_by_batch_equal_those_of_one_pass() -> None:
    vectors = clustered(2400, 32, 5)
    index = PairIndex.empty(32)
    row_at: list[int] = []  # position -> row of ``vectors`` (positions follow the order of addition)
    found: set[tuple[int, int]] = set()
    for batch in np.array_split(np.random.default_rng(0).permutation(len(vectors)), 6):
        positions = index.add(vectors[batch])
        row_at.extend(batch.tolist())
        for p, q, _ in index.pairs_from(positions, 0.9):
            a, b = row_at[p], row_at[q]
            found.add((min(a, b), max(a, b)))
    assert found == _pairs(exact_pairs(vectors, 0.9))


def test_removed_positions_are_never_paired_and_a_saved_index_goes_on(tmp_path: Path) -> None:
    vectors = clustered(1500, 32, 9)
    index = PairIndex.empty(32)
    index.add(vectors[:1000])
    gone = np.arange(0, 1000, 3)
    index.remove(gone)
    index.save(tmp_path / "state")
    loaded = PairIndex.load(tmp_path / "state")
    positions = loaded.add(vectors[1000:])
    found = loaded.pairs_from(positions, 0.9)
    assert not {p for pair in _pairs(found) for p in pair} & set(gone.tolist())
    alive = np.setdiff1d(np.arange(1500), gone)
    expected = {(int(alive[a]), int(alive[b])) for a, b, _ in exact_pairs(vectors[alive], 0.9)
                if alive[a] >= 1000 or alive[b] >= 1000}
    assert _pairs(found) == expected


@pytest.mark.parametrize(("a", "b", "linked"), [
    ("1892", "1895", False),
    ("9 May 1964", "4 April 1964", False),
    ("5 March 1892", "March 5, 1892", True),
    ("Mar 5 1892", "5 March 1892", True),
    ("1990", "1990s", False),
    ("50 Hz", "60 Hz", False),
    ("1,000 metres", "1000 metres", True),
    ("Apollo 11", "Apollo 11 mission", True),
    ("Apollo 11", "Apollo", False),
    ("New York City", "NYC", True),
])
def test_names_that_state_different_numbers_or_dates_never_link(a: str, b: str, linked: bool) -> None:
    assert may_link(a, b) is linked
    assert may_link(b, a) is linked
    assert date_key("March 5, 1892") == ("1892", "5", "march")


def test_hashing_collisions_are_no_synonyms(tmp_path: Path) -> None:
    """With the hashing embedder two names whose words fall into the same slots embed alike; the stage
    then also asks the words themselves (word_cosine) to reach the threshold."""
    from support import HashEmbedder

    embedder = HashEmbedder(dim=8)  # few slots: collisions are certain among these names
    names = [f"Alma {w}" for w in ("Sholte", "Mouston", "Kraith", "Groustun", "Vealtir", "Saistan", "Bumou",
                                   "Teaskan", "Pruskor", "Skaedir")] + ["Kesmoor University", "University Kesmoor"]
    vectors = embedder.embed(names)
    store = _store(tmp_path, names, vectors)
    assert len(exact_pairs(vectors, 0.9)) > 1  # the collisions the vectors alone would link
    update_synonyms(store, 0.9, lexical=True)
    assert _synonyms(store) == {("ent:0010", "ent:0011")}
    assert word_cosine("Alma Sholte", "Alma Mouston") == pytest.approx(0.5)


def _store(tmp_path: Path, names: list[str], vectors: np.ndarray) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "s.db")
    ids = [f"ent:{i:04d}" for i in range(len(names))]
    store.add_nodes([Node(i, "entity", name) for i, name in zip(ids, names, strict=True)])
    store.put_vectors(ids, vectors)
    return store


def _synonyms(store: SQLiteStore) -> set[tuple[str, str]]:
    return {(e.src, e.dst) for e in store.iter_edges(["SYNONYM"])}


def _reference(store: SQLiteStore, threshold: float = 0.9) -> set[tuple[str, str]]:
    ids, vectors = store.get_vectors(["entity"])
    names = {n.id: n.text for n in store.iter_nodes("entity")}
    return set(exact_synonym_pairs(ids, vectors, [names[i] for i in ids], threshold))


def test_years_with_close_vectors_get_no_synonym_edge(tmp_path: Path) -> None:
    names = ["1892", "1895", "5 March 1892", "March 5, 1892", "New York", "NYC"]
    rows = np.array([[1, 0.02, 0], [1, 0.03, 0], [0, 1, 0.01], [0, 1, 0.02], [0, 0.01, 1], [0.02, 0, 1]])
    store = _store(tmp_path, names, _unit(rows))
    update_synonyms(store, 0.9)
    assert _synonyms(store) == {("ent:0002", "ent:0003"), ("ent:0004", "ent:0005")}


@pytest.mark.parametrize("logged", [False, True])
def test_the_stage_follows_additions_removals_and_edits_as_a_rebuild_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logged: bool) -> None:
    """With the index's change log, each run reads only the entities the log names (never every entity
    vector); without it, every vector. The edges are the same either way."""
    vectors = clustered(900, 32, 4)
    names = [f"entity {i}" for i in range(900)]
    store = _store(tmp_path, names[:600], vectors[:600])
    if logged:
        store.log_changes()
    first = update_synonyms(store, 0.9)
    assert first.rebuilt and first.new_entities == 600 and _synonyms(store) == _reference(store)
    whole = store.get_vectors

    def run(threshold: float = 0.9) -> SynonymUpdate:
        """The stage; with the log, failing if it reads every entity vector (the reference does)."""
        if logged:
            monkeypatch.setattr(store, "get_vectors", lambda types=None, *, node_ids=None: whole(
                types, node_ids=node_ids) if node_ids is not None else pytest.fail("every entity vector read"))
        try:
            return update_synonyms(store, threshold)
        finally:
            monkeypatch.setattr(store, "get_vectors", whole)

    ids = [f"ent:{i:04d}" for i in range(600, 900)]
    store.add_nodes([Node(i, "entity", n) for i, n in zip(ids, names[600:], strict=True)])
    store.put_vectors(ids, vectors[600:])
    added = run()
    assert not added.rebuilt and added.new_entities == 300 and _synonyms(store) == _reference(store)
    for node_id in ("ent:0003", "ent:0450", "ent:0899"):
        store.delete_node(node_id)  # the store drops its edges with it
    edited = "ent:0010"
    store.put_vectors([edited], vectors[[11]])  # an edit: its vector changed, so do its pairs
    update = run()
    assert update.removed_entities == 4 and update.new_entities == 1 and not update.rebuilt
    assert _synonyms(store) == _reference(store)
    store.add_edges([Edge("ent:0001", "ent:0002", "SYNONYM")])  # e.g. moved there by a merge
    run()
    assert _synonyms(store) == _reference(store)
    shutil.rmtree(state_folder(store))  # a lost state: rebuilt from the vectors, the same edges
    again = update_synonyms(store, 0.9)  # (a rebuild reads every vector)
    assert again.rebuilt and _synonyms(store) == _reference(store)
    assert update_synonyms(store, 0.95).rebuilt and _synonyms(store) == _reference(store, 0.95)


@given(st.lists(st.sampled_from(["alma", "kesmoor", "university", "of", "the", "1892", "río"]), max_size=8),
       st.lists(st.sampled_from(["alma", "kesmoor", "university", "of", "the", "1892", "río"]), max_size=8))
def test_word_cosine_is_the_cosine_of_word_count_vectors(a: list[str], b: list[str]) -> None:
    vocabulary = sorted(set(a) | set(b))
    va = np.array([a.count(w) for w in vocabulary], dtype=np.float64)
    vb = np.array([b.count(w) for w in vocabulary], dtype=np.float64)
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    expected = float(va @ vb) / norm if norm else 0.0
    assert word_cosine(" ".join(a).title(), " ".join(b)) == pytest.approx(expected, abs=1e-12)


def test_candidate_names_are_read_and_parsed_once_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name meets many candidates (hashing collisions at a million passages: 517k names gave 4.5M
    pairs), so its date key and words are computed once per name, not once per pair."""
    from support import HashEmbedder
    from thinkgraph.index import resolve

    names = [f"Alma {w}" for w in ("Sholte", "Mouston", "Kraith", "Groustun", "Vealtir", "Saistan", "Bumou",
                                   "Teaskan", "Pruskor", "Skaedir")]
    vectors = HashEmbedder(dim=2).embed(names)  # two slots: many pairs per name
    store = _store(tmp_path, names, vectors)
    pairs = exact_pairs(vectors, 0.9)
    assert len(pairs) > len(names)
    calls: list[str] = []
    real = resolve.date_key
    monkeypatch.setattr(resolve, "date_key", lambda name: calls.append(name) or real(name))
    update_synonyms(store, 0.9, lexical=True)
    assert len(calls) == len({p for a, b, _ in pairs for p in (a, b)})
    assert _synonyms(store) == set(exact_synonym_pairs([f"ent:{i:04d}" for i in range(len(names))], vectors,
                                                       names, 0.9, lexical=True))
