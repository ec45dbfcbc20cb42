"""The contract every GraphStore backend must pass, run on each: SQLite (a file) and PostgreSQL (a
schema on the test server, see pg_support.py)."""

from __future__ import annotations

import inspect
import itertools
import multiprocessing
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pytest

from thinkgraph.errors import IndexFileError
from thinkgraph.models import DocStatus, DocumentRecord, Edge, Node, Proposal, Provenance
from thinkgraph.store import open_store
from thinkgraph.store.base import SECTIONS, ChangeSet, GraphStore
from thinkgraph.store.common import CHANGES, edge_key
from thinkgraph.store.copy import copy_index
from thinkgraph.store.sqlite import SQLiteStore

BACKENDS = ("sqlite", "postgres")
ROLES: tuple[type, ...] = tuple(b for b in GraphStore.__bases__ if b is not Protocol)  # GraphStore is their union
# Public methods a backend has beyond the contract (no caller typed against GraphStore can use them).
BACKEND_ONLY = {"SQLiteStore": {"backup"}, "PostgresStore": set()}


@pytest.fixture(params=BACKENDS)
def new_location(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """Gives where a new, empty index of the backend goes (a file, or a fresh schema)."""
    if request.param == "sqlite":
        numbers = itertools.count()
        return lambda: str(tmp_path / f"i{next(numbers)}.db")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(new_location: Callable[[], str]) -> Iterator[GraphStore]:
    s = open_store(new_location())
    yield s
    s.close()


def _doc(doc_id: str, h: str = "h") -> DocumentRecord:
    return DocumentRecord(id=doc_id, source=f"{doc_id}.txt", title=doc_id, content_hash=h + doc_id)


def _two_documents(store: GraphStore) -> None:
    """Doc a and doc b share entity X; entity Y and edge X->Y only in a; Z only in b."""
    for d in ("a", "b"):
        store.upsert_document(_doc(d))
    store.add_nodes([Node("doc:a", "document", "a"), Node("doc:b", "document", "b"),
                     Node("chunk:a", "chunk", "text a"), Node("chunk:b", "chunk", "text b"),
                     Node("ent:x", "entity", "X"), Node("ent:y", "entity", "Y"), Node("ent:z", "entity", "Z")])
    xy = Edge("ent:x", "ent:y", "OPENREL", props={"predicate": "likes"})
    xz = Edge("ent:x", "ent:z", "OPENREL", props={"predicate": "knows"})
    store.add_edges([xy, xz, Edge("chunk:a", "doc:a", "PART_OF"), Edge("chunk:b", "doc:b", "PART_OF"),
                     Edge("ent:x", "ent:y", "SYNONYM")])
    store.add_provenance([
        Provenance("chunk:a", "a", "chunk:a", 0, 6), Provenance("chunk:b", "b", "chunk:b", 0, 6),
        Provenance("ent:x", "a", "chunk:a", 0, 1), Provenance("ent:x", "b", "chunk:b", 2, 3),
        Provenance("ent:y", "a", "chunk:a"), Provenance("ent:z", "b", "chunk:b"),
        Provenance(edge_key(xy), "a", "chunk:a"), Provenance(edge_key(xz), "b", "chunk:b"),
        Provenance(edge_key(Edge("chunk:a", "doc:a", "PART_OF")), "a", "chunk:a"),
        Provenance(edge_key(Edge("chunk:b", "doc:b", "PART_OF")), "b", "chunk:b"),
    ])
    store.put_vectors(["ent:x", "ent:y", "ent:z"], np.eye(3, dtype=np.float32))


def test_meta_roundtrip_schema_marker_and_counter(store: GraphStore) -> None:
    assert store.get_meta("schema_version") == "1"
    store.set_meta("k", "v")
    store.set_meta("k", "w")
    assert store.get_meta("k") == "w"
    assert store.get_meta("missing") is None
    assert [store.increment_meta("n") for _ in range(3)] == [1, 2, 3]
    assert store.get_meta("n") == "3"


def test_documents_status_machine_and_order(store: GraphStore) -> None:
    store.upsert_document(_doc("a"))
    assert store.get_document("a").status == DocStatus.PENDING
    store.set_document_status("a", DocStatus.FAILED, "boom")
    doc = store.get_document("a")
    assert doc.status == DocStatus.FAILED and doc.error == "boom"
    assert [d.id for d in store.list_documents(DocStatus.FAILED)] == ["a"]
    assert store.find_document_by_hash("ha").id == "a"
    assert store.get_document("zz") is None
    for doc_id in ("b", "B", "_x", "é"):
        store.upsert_document(_doc(doc_id))
    assert [d.id for d in store.list_documents()] == ["B", "_x", "a", "b", "é"]  # bytewise, whatever the locale
    store.upsert_document(DocumentRecord(id="a", source="new.txt", title="A", content_hash="h2", n_chars=9))
    assert store.get_document("a") == DocumentRecord("a", "new.txt", "A", "h2", DocStatus.PENDING, None, 9)


def test_nodes_edges_provenance(store: GraphStore) -> None:
    _two_documents(store)
    assert store.count_nodes() == {"chunk": 2, "document": 2, "entity": 3}
    assert store.count_edges()["OPENREL"] == 2
    assert store.get_node("ent:x").text == "X"
    assert [n.id for n in store.get_nodes(["ent:z", "nope", "ent:x"])] == ["ent:z", "ent:x"]
    assert {e.dst for e in store.edges_of("ent:x", "OPENREL")} == {"ent:y", "ent:z"}
    assert {p.doc_id for p in store.provenance("ent:x")} == {"a", "b"}
    assert [(p.doc_id, p.start, p.end) for p in store.provenance("ent:x")] == [("a", 0, 1), ("b", 2, 3)]
    assert store.provenance("ent:y")[0].start is None and store.provenance("ent:y")[0].chunk_id == "chunk:a"
    # adding the same node and edge again changes nothing
    store.add_nodes([Node("ent:x", "entity", "X")])
    store.add_edges([Edge("ent:x", "ent:y", "OPENREL", props={"predicate": "likes"})])
    assert store.count_edges()["OPENREL"] == 2
    # iteration follows insertion order
    assert [n.id for n in store.iter_nodes("entity")] == ["ent:x", "ent:y", "ent:z"]
    assert [(e.src, e.dst, e.type) for e in store.iter_edges(["OPENREL", "SYNONYM"])] == [
        ("ent:x", "ent:y", "OPENREL"), ("ent:x", "ent:z", "OPENREL"), ("ent:x", "ent:y", "SYNONYM")]
    assert store.iter_edges(["OPENREL"]).__next__().props == {"predicate": "likes"}


def test_edge_columns_are_iter_edges_without_the_edges(store: GraphStore) -> None:
    _two_documents(store)
    for types in (["OPENREL", "SYNONYM"], ["SYNONYM"], ["CONTAINS", "OPENREL"], ["NONE"]):
        edges = list(store.iter_edges(types))
        assert store.edge_columns(types) == ([e.src for e in edges], [e.dst for e in edges],
                                             [e.weight for e in edges])


def test_edges_among_keeps_only_edges_inside_the_set_in_insertion_order(store: GraphStore) -> None:
    _two_documents(store)
    among = store.edges_among(["ent:y", "ent:x", "chunk:a", "ent:y"])
    assert [(e.src, e.dst, e.type) for e in among] == [("ent:x", "ent:y", "OPENREL"), ("ent:x", "ent:y", "SYNONYM")]
    assert among[0].props == {"predicate": "likes"}
    assert store.edges_among(["ent:x"]) == [] and store.edges_among([]) == []
    many = [f"none:{i}" for i in range(1200)] + ["chunk:b", "doc:b"]  # more ids than one statement holds
    assert [(e.src, e.dst) for e in store.edges_among(many)] == [("chunk:b", "doc:b")]


def test_edges_between_pairs_either_way_in_insertion_order(store: GraphStore) -> None:
    _two_documents(store)
    among = store.edges_among(["ent:y", "ent:x", "chunk:a"])
    for pairs in ([("ent:x", "ent:y")], [("ent:y", "ent:x")], [("ent:y", "ent:x"), ("ent:x", "ent:y")]):
        assert store.edges_between(pairs) == [e for e in among if {e.src, e.dst} == {"ent:x", "ent:y"}]
    assert store.edges_between([("ent:x", "ent:x"), ("ent:x", "none:1")]) == [] and store.edges_between([]) == []
    many = [(f"none:{i}", "ent:x") for i in range(450)] + [("doc:b", "chunk:b")]  # more than one statement holds
    assert [(e.src, e.dst) for e in store.edges_between(many)] == [("chunk:b", "doc:b")]


def test_edges_from_reads_one_side_and_keeps_the_other_end_in_the_set(store: GraphStore) -> None:
    _two_documents(store)
    all_ids = ["ent:x", "ent:y", "ent:z", "chunk:a", "chunk:b", "doc:a", "doc:b"]
    for side in (["ent:y"], ["ent:x", "ent:y"], ["chunk:a", "ent:z"]):
        for among in (all_ids, ["ent:x"], ["ent:y", "ent:x", "ent:z"]):
            expected = [e for e in store.edges_among([*side, *among])
                        if (e.src in side and e.dst in among) or (e.dst in side and e.src in among)]
            assert store.edges_from(side, among) == expected
    assert [(e.src, e.dst, e.type) for e in store.edges_from(["ent:y"], ["ent:x"])] == [
        ("ent:x", "ent:y", "OPENREL"), ("ent:x", "ent:y", "SYNONYM")]
    assert store.edges_from([], all_ids) == [] and store.edges_from(["ent:x"], []) == []
    many = [f"none:{i}" for i in range(900)] + ["doc:b"]  # more ids than one statement holds, on both sides
    assert [(e.src, e.dst) for e in store.edges_from(many, [*many, "chunk:b"])] == [("chunk:b", "doc:b")]


def test_delete_edges_removes_those_edges_only(store: GraphStore) -> None:
    _two_documents(store)
    among = store.edges_among(["ent:x", "ent:y", "ent:z"])
    synonym = [e for e in among if e.type == "SYNONYM"]
    absent = Edge("ent:z", "ent:y", "SYNONYM")
    assert store.delete_edges([*synonym, absent, *synonym]) == len(synonym) == 1
    assert store.edges_among(["ent:x", "ent:y", "ent:z"]) == [e for e in among if e.type != "SYNONYM"]
    assert store.delete_edges([]) == 0
    assert store.get_node("ent:x") is not None


def test_delete_vectors_leaves_the_node_to_be_encoded_again(store: GraphStore) -> None:
    _two_documents(store)
    assert store.delete_vectors(["ent:x", "ent:x", "none:1"]) == 1 and store.delete_vectors([]) == 0
    assert store.get_vectors(["entity"])[0] == ["ent:y", "ent:z"]
    assert "ent:x" in {n.id for n in store.nodes_missing_vectors(["entity"])}


def test_nodes_missing_vectors_come_in_commit_order_of_the_asked_types(store: GraphStore) -> None:
    """The embedding tail encodes them in this order (fixed batches: two runs embed the same ones); more
    than one read's worth (500 ids), committed in an order unlike the ids'."""
    ids = [f"n:{(k * 7919) % 1201:05d}" for k in range(1201)]
    store.add_nodes([Node(i, "entity" if k % 3 else "chunk", i) for k, i in enumerate(ids)])
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(ids[::5]), 8)).astype(np.float32)
    store.put_vectors(ids[::5], vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    assert [n.id for n in store.nodes_missing_vectors(["entity"])] == [i for k, i in enumerate(ids) if k % 3 and k % 5]
    assert [n.type for n in store.nodes_missing_vectors(["chunk", "entity"])].count("chunk") == \
        len([k for k in range(1201) if not k % 3 and k % 5])


def test_update_node_keeps_edges(store: GraphStore) -> None:
    _two_documents(store)
    store.update_node(Node("ent:x", "entity", "X prime", {"description": "renamed", "n": [1, 2]}))
    assert store.get_node("ent:x") == Node("ent:x", "entity", "X prime", {"description": "renamed", "n": [1, 2]})
    assert len(store.edges_of("ent:x", "OPENREL")) == 2


def test_remove_document_removes_only_what_it_alone_supported(store: GraphStore) -> None:
    _two_documents(store)
    before = int(store.get_meta(CHANGES) or 0)
    report = store.remove_document("a")
    assert store.get_node("ent:y") is None  # only in a
    assert store.get_node("chunk:a") is None and store.get_node("doc:a") is None
    assert store.get_node("ent:x") is not None  # also in b
    assert {p.doc_id for p in store.provenance("ent:x")} == {"b"}
    assert [e.dst for e in store.edges_of("ent:x", "OPENREL")] == ["ent:z"]
    assert store.get_document("a") is None and store.get_document("b") is not None
    ids, _ = store.get_vectors()
    assert sorted(ids) == ["ent:x", "ent:z"]
    assert report.nodes_removed == 3
    assert store.get_meta("derived_stale") == "1"
    assert int(store.get_meta(CHANGES)) == before + 1


def test_remove_document_clears_its_own_stage_markers_only(store: GraphStore) -> None:
    for doc_id in ("d_1", "dx1", "d%1"):
        store.upsert_document(_doc(doc_id))
        store.mark_done("extract", f"{doc_id}::c0")
    store.remove_document("d_1")
    assert not store.is_done("extract", "d_1::c0")
    assert store.is_done("extract", "dx1::c0") and store.is_done("extract", "d%1::c0")  # '_' is no wildcard


def test_vectors_roundtrip_missing_and_search(store: GraphStore) -> None:
    _two_documents(store)
    ids, vecs = store.get_vectors(["entity"])
    assert ids == ["ent:x", "ent:y", "ent:z"]
    np.testing.assert_array_equal(vecs, np.eye(3))
    assert vecs.dtype == np.float32
    assert {n.id for n in store.nodes_missing_vectors(["chunk", "entity"])} == {"chunk:a", "chunk:b"}
    with pytest.raises(ValueError):
        store.put_vectors(["a"], np.zeros((2, 3)))
    store.put_vectors(["chunk:a", "chunk:b"], np.array([[0.6, 0.8, 0], [0, 0.6, 0.8]], dtype=np.float32))
    query = np.array([0.0, 0.8, 0.6], dtype=np.float32)
    found = store.search_vectors(query, "entity", 2)
    assert [i for i, _ in found] == ["ent:y", "ent:z"]
    assert [round(s, 4) for _, s in found] == [0.8, 0.6]
    assert [i for i, _ in store.search_vectors(query, "chunk", 5)] == ["chunk:b", "chunk:a"]
    assert store.search_vectors(query, "community", 3) == []


def test_stages_failures_cache_usage(store: GraphStore) -> None:
    store.mark_done("extract", "a::c1")
    assert store.is_done("extract", "a::c1") and not store.is_done("extract", "a::c2")
    store.record_failure("extract", "k", "bad json")
    store.record_failure("extract", "k", "bad json again")
    assert store.failure_counts() == {"extract": 1}
    assert store.failures("extract") == [("extract", "k", "bad json again", 2)]
    store.clear_failure("extract", "k")
    assert store.failure_counts() == {} and store.failures() == []
    store.cache_put("key", {"x": [1, 2], "é": None})
    assert store.cache_get("key") == {"x": [1, 2], "é": None} and store.cache_get("other") is None
    store.record_usage("s", 1, 10, 2, 0.5)
    store.record_usage("s", 2, 5, 1, 0.5)
    assert store.usage_totals()["s"] == {"calls": 3, "prompt_tokens": 15, "completion_tokens": 3, "seconds": 1.0}


def test_proposals_and_audit(store: GraphStore) -> None:
    first = store.add_proposal(Proposal("q?", "A", "likes", "B", "chunk:a", "a"))
    second = store.add_proposal(Proposal("q?", "B", "knows", "C", "chunk:b", "b"))
    assert second > first
    store.set_proposal_status(first, "approved")
    assert [p.id for p in store.list_proposals("pending")] == [second]
    assert store.list_proposals()[0] == Proposal("q?", "A", "likes", "B", "chunk:a", "a", "approved", first)
    store.add_audit("entity.edit", {"id": "ent:x"})
    store.add_audit("entity.merge", {"target": "ent:y"})
    audit = store.list_audit()
    assert [a["action"] for a in audit] == ["entity.merge", "entity.edit"]  # newest first
    assert audit[1]["payload"] == {"id": "ent:x"} and len(store.list_audit(limit=1)) == 1


def test_transaction_rolls_back_on_error_and_nests(store: GraphStore) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.add_nodes([Node("n1", "entity", "n1")])
        raise RuntimeError("crash mid-batch")
    assert store.get_node("n1") is None
    with pytest.raises(RuntimeError), store.transaction():
        store.add_nodes([Node("n2", "entity", "n2")])
        with store.transaction():
            store.set_meta("inner", "1")
            assert store.get_meta("inner") == "1"  # a transaction reads its own writes
        raise RuntimeError("after the inner block")
    assert store.get_node("n2") is None and store.get_meta("inner") is None


def test_delete_helpers(store: GraphStore) -> None:
    _two_documents(store)
    assert store.delete_edges_of_type("SYNONYM") == 1
    store.delete_node("ent:z")
    assert store.get_node("ent:z") is None and not store.edges_of("ent:z")
    assert store.delete_nodes_of_type("chunk") == 2
    assert store.delete_nodes_of_type("entity") == 2
    assert store.get_vectors()[0] == []


def test_location_reopens_and_checks_on_open(new_location: Callable[[], str]) -> None:
    where = new_location()
    with pytest.raises(IndexFileError, match="no index"):
        open_store(where, create=False)
    s = open_store(where)
    s.add_nodes([Node("n", "entity", "N")])
    assert s.size_bytes() > 0 and s.describe()
    s.close()
    again = open_store(s.location, create=False)
    assert again.get_node("n").text == "N"
    again.set_meta("schema_version", "99")
    again.close()
    with pytest.raises(IndexFileError, match="schema version 99"):
        open_store(where)


def test_claims_leases(store: GraphStore) -> None:
    assert store.claim("doc", "d1", "p1", 30)
    assert not store.claim("doc", "d1", "p2", 30)  # held
    assert store.claim("doc", "d1", "p1", 30)  # the holder renews
    assert store.claim("doc", "d1", "p2", 30, replace="p1")  # taken over from a holder known dead
    assert store.live_claims("doc") == {"d1": "p2"} and store.live_claims("doc", "d1") == {"d1": "p2"}
    store.release_claim("doc", "d1", "p1")  # not the holder: no effect
    assert store.live_claims("doc", "d1") == {"d1": "p2"}
    store.release_claim("doc", "d1", "p2")
    assert store.live_claims("doc") == {} and store.claim("doc", "d1", "p3", 0.3)
    assert store.claim("run", "p3", "p3", 0.3) and store.live_claims("run") == {"p3": "p3"}
    time.sleep(0.6)
    assert store.live_claims("doc") == {}  # the lease expired
    assert store.claim("doc", "d1", "p4", 0.3)
    assert store.renew_claims("p4", 30) == 1
    time.sleep(0.4)
    assert store.live_claims("doc") == {"d1": "p4"}


def _fill(store: GraphStore) -> None:
    _two_documents(store)
    store.mark_done("extract", "a::c1")
    store.record_failure("extract", "b::c1", "bad json")
    store.cache_put("k", {"reply": "ok"})
    store.record_usage("extract", 2, 20, 4, 1.5)
    store.add_audit("entity.edit", {"id": "ent:x"})
    store.add_proposal(Proposal("q?", "A", "likes", "B", "chunk:a", "a"))


def test_dump_and_load_copy_everything(store: GraphStore, new_location: Callable[[], str]) -> None:
    _fill(store)
    copy = open_store(new_location())
    try:
        counts = copy_index(store, copy)
        assert counts["nodes"] == 7 and counts["vectors"] == 3 and counts["llm_cache"] == 1
        for part in SECTIONS:
            original, copied = list(store.dump(part.name)), list(copy.dump(part.name))
            if part.name == "vectors":
                assert [r[0] for r in copied] == [r[0] for r in original]
                np.testing.assert_array_equal(np.stack([r[1] for r in copied]), np.stack([r[1] for r in original]))
            else:
                assert copied == original, part.name
        assert copy.add_proposal(Proposal("q2", "C", "p", "D", "chunk:b", "b")) == 2  # ids go on after the copy
        with pytest.raises(Exception, match="already holds an index"):
            copy_index(store, copy)
    finally:
        copy.close()


def test_concurrent_processes_lose_nothing(store: GraphStore) -> None:
    """Several processes increment one counter, claim the same keys and add the same nodes at once:
    every increment counts, each key has exactly one winner, no node is stored twice."""
    import store_workers

    with multiprocessing.get_context("spawn").Pool(3) as pool:
        results = pool.map(store_workers.contend, [(store.location, w) for w in range(3)])
    assert store.get_meta("counter") == str(3 * store_workers.ROUNDS)
    claimed = [key for keys in results for key in keys]
    assert sorted(claimed) == sorted(f"k{i}" for i in range(store_workers.ROUNDS))
    assert store.count_nodes() == {"entity": store_workers.ROUNDS}
    assert len(list(store.iter_edges())) == store_workers.ROUNDS - 1


def test_sqlite_refuses_corrupt_foreign_and_directories(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(IndexFileError, match="not a thinkgraph index"):
        SQLiteStore(corrupt)
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE people(name TEXT)")
    con.execute("INSERT INTO people VALUES ('Ada')")
    con.commit()
    con.close()
    before = foreign.read_bytes()
    with pytest.raises(IndexFileError, match="not a thinkgraph index"):
        SQLiteStore(foreign)
    assert foreign.read_bytes() == before  # refused before the switch to WAL could rewrite its header
    assert not (tmp_path / "foreign.db-wal").exists()
    with pytest.raises(IndexFileError, match="directory"):
        SQLiteStore(tmp_path)


def test_read_only_sqlite_index_reads_and_refuses_writes_in_one_line(tmp_path: Path) -> None:
    from thinkgraph.errors import IndexFileError
    from thinkgraph.models import Node
    from thinkgraph.store.sqlite import SQLiteStore

    path = tmp_path / "ro.db"
    with_data = SQLiteStore(path)
    with_data.add_nodes([Node("n1", "entity", "Ada")])
    with_data.close()
    store = SQLiteStore(path, read_only=True)
    assert store.read_only is True
    assert store.get_node("n1") is not None and store.count_nodes() == {"entity": 1}
    with pytest.raises(IndexFileError, match="read-only"):
        store.add_nodes([Node("n2", "entity", "Bo")])
    with pytest.raises(IndexFileError, match="read-only"):
        store.set_meta("k", "v")
    store.close()


def test_every_change_to_nodes_edges_or_vectors_replaces_the_content_revision(store: GraphStore) -> None:
    """Files derived from the index (the view cache) are keyed by it: a change it missed would serve
    an old view. Reads and bookkeeping leave it alone."""
    _two_documents(store)
    store.put_vectors(["ent:x"], np.ones((1, 3), dtype=np.float32))
    changes: list[Callable[[], object]] = [
        lambda: store.add_nodes([Node("ent:w", "entity", "W")]),
        lambda: store.update_node(Node("ent:w", "entity", "W renamed")),
        lambda: store.add_edges([Edge("ent:w", "ent:x", "OPENREL", props={"predicate": "meets"})]),
        lambda: store.put_vectors(["ent:w"], np.ones((1, 3), dtype=np.float32)),
        lambda: store.delete_edges_of_type("SYNONYM"),
        lambda: store.delete_node("ent:w"),
        lambda: store.delete_nodes_of_type("entity"),
        lambda: store.remove_document("a"),
        lambda: store.load("nodes", [("ent:v", "entity", "V", "{}")]),
    ]
    seen = {store.content_revision()}
    assert None not in seen
    for change in changes:
        change()
        revision = store.content_revision()
        assert revision not in seen
        seen.add(revision)
    for untouched in (lambda: store.get_nodes(["ent:v"]), lambda: store.cache_put("k", {"v": 1}),
                      lambda: store.mark_done("extract", "a"), lambda: store.get_vectors()):
        untouched()
        assert store.content_revision() == revision
    with pytest.raises(RuntimeError), store.transaction():  # a rolled-back change keeps the old revision
        store.add_nodes([Node("ent:u", "entity", "U")])
        raise RuntimeError
    assert store.content_revision() == revision


def test_the_change_log_names_what_each_change_touched_from_its_start_on(store: GraphStore) -> None:
    """Every write path is logged (inserts, updates, bulk deletes of a document), positions move only
    with changes, and a position from before the log started (or from another log) gets None."""
    _two_documents(store)
    assert store.change_position() is None and store.changes_since(0) is None  # no log during a first build
    store.log_changes()
    store.log_changes()  # (started once)
    start = store.change_position()
    assert start is not None and store.changes_since(start) == ChangeSet(frozenset(), frozenset(), frozenset())
    revision = store.content_revision()
    assert revision is not None and store.changes_since(start, revision) is not None  # the revision of the start
    assert store.changes_since(start, "another index's revision") is None
    store.get_nodes(["ent:x"])
    store.mark_done("extract", "a")
    assert store.change_position() == start  # reads and bookkeeping log nothing
    store.add_nodes([Node("ent:w", "entity", "W")])
    store.add_edges([Edge("ent:w", "ent:x", "OPENREL", props={"predicate": "meets"})])
    store.put_vectors(["ent:w"], np.ones((1, 3), dtype=np.float32))
    store.update_node(Node("ent:y", "entity", "Y renamed"))
    middle = store.change_position()
    assert middle is not None and middle > start
    assert store.changes_since(middle, store.content_revision()) is not None
    assert store.changes_since(middle, revision) is None  # that position is of a later revision
    assert store.changes_since(start) == ChangeSet(frozenset({"ent:w", "ent:y"}), frozenset({("ent:w", "ent:x")}),
                                                  frozenset({"ent:w"}))
    store.remove_document("b")  # z and the x->z edge go with it, in the store's bulk deletes
    store.delete_vectors(["ent:x"])
    after = store.changes_since(middle)
    assert after is not None and {"ent:z", "chunk:b"} <= after.nodes and "ent:x" not in after.nodes
    assert {("ent:x", "ent:z"), ("chunk:b", "doc:b")} <= after.edges and {"ent:x", "ent:z"} <= after.vectors
    assert store.changes_since(start - 1) is None  # before the log started
    assert store.changes_since(10**9) is None  # a position this log never had
    last = store.change_position()
    assert last is not None
    store.log_changes(keep=1)  # kept to its last row: older positions are no longer reached
    assert store.changes_since(middle) is None and store.changes_since(last - 1) is not None
    assert store.change_position() == last


def test_vectors_of_some_nodes(store: GraphStore) -> None:
    _two_documents(store)
    ids, matrix = store.get_vectors(["entity"], node_ids=["ent:z", "ent:x", "chunk:a", "nosuch"])
    assert ids == ["ent:x", "ent:z"] and np.array_equal(matrix, np.eye(3, dtype=np.float32)[[0, 2]])
    assert store.get_vectors(["chunk"], node_ids=["ent:x"])[0] == []
    assert store.get_vectors(node_ids=["ent:y"])[0] == ["ent:y"]


def _members(role: type) -> set[str]:
    """What a protocol declares, its own and its bases': attributes and methods."""
    names: set[str] = set()
    for cls in role.__mro__:
        if cls is Protocol or not getattr(cls, "_is_protocol", False):
            continue
        names |= set(vars(cls).get("__annotations__", {}))
        names |= {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}
    return names


def _params(method: Any, *, bound: bool) -> list[tuple[str, Any, Any]]:
    params = list(inspect.signature(method).parameters.values())
    return [(p.name, p.kind, p.default) for p in (params if bound else params[1:])]


def test_every_backend_implements_every_role_protocol(store: GraphStore) -> None:
    """Each backend has every member of every role, a method with the protocol's parameters, and no
    public method outside the contract unless listed, so the contract and the backends cannot drift
    apart silently. The roles split the contract: no member is declared by two of them."""
    assert [r.__name__ for r in ROLES] == ["IndexLocation", "Manifest", "DocumentStore", "GraphData", "VectorStore",
                                           "Bookkeeping", "ClaimStore", "ChangeLog", "RowDump"]
    kind = type(store).__name__
    declared: set[str] = set()
    for role in ROLES:
        members = _members(role)
        assert members and not members & declared, (role.__name__, members & declared)
        declared |= members
        assert isinstance(store, role), f"{kind} is not a {role.__name__}"
        for name in sorted(members):
            assert hasattr(store, name), f"{kind} lacks {role.__name__}.{name}"
            spec = getattr(role, name, None)
            if callable(spec):
                got = getattr(store, name)
                assert callable(got), f"{kind}.{name} is not a method"
                assert _params(got, bound=True) == _params(spec, bound=False), f"{kind}.{name} differs from the role"
    assert declared == _members(GraphStore)
    assert isinstance(store, GraphStore)
    assert type(store.read_only) is bool and store.read_only is False  # a new index is writable
    assert isinstance(store.location, str) and isinstance(store.path, Path)
    public = {n for n in dir(type(store)) if not n.startswith("_") and callable(getattr(type(store), n))}
    assert public - declared == BACKEND_ONLY[kind]


def test_a_larger_page_cache_for_a_while_keeps_every_row(store: GraphStore) -> None:
    """``page_cache``: a stage may ask for more of the index's pages in memory; its writes are kept and
    the connection's cache is what it was afterwards (SQLite: the PRAGMA; a server: unchanged)."""
    before = _cache_size(store)
    with store.page_cache(1_048_576):
        if isinstance(store, SQLiteStore):
            assert _cache_size(store) == -1_048_576
        store.add_nodes([Node(f"ent:{i}", "entity", f"E{i}") for i in range(50)])
        with store.page_cache(1024):  # a smaller ask never lowers it
            assert _cache_size(store) == (-1_048_576 if isinstance(store, SQLiteStore) else None)
    assert _cache_size(store) == before
    assert len(store.get_nodes([f"ent:{i}" for i in range(50)])) == 50


def _cache_size(store: GraphStore) -> int | None:
    return int(store._db.execute("PRAGMA cache_size").fetchone()[0]) if isinstance(store, SQLiteStore) else None
