"""The contract every GraphStore backend must pass (only the SQLite backend exists today)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from thinkgraph.errors import IndexFileError
from thinkgraph.models import DocStatus, DocumentRecord, Edge, Node, Provenance
from thinkgraph.store.base import GraphStore
from thinkgraph.store.sqlite import SQLiteStore, edge_key

BACKENDS: dict[str, Callable[[Path], GraphStore]] = {"sqlite": lambda p: SQLiteStore(p / "i.db")}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> GraphStore:
    s = BACKENDS[request.param](tmp_path)
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


def test_meta_roundtrip_and_schema_marker(store: GraphStore) -> None:
    assert store.get_meta("schema_version") == "1"
    store.set_meta("k", "v")
    assert store.get_meta("k") == "v"
    assert store.get_meta("missing") is None


def test_documents_status_machine(store: GraphStore) -> None:
    store.upsert_document(_doc("a"))
    assert store.get_document("a").status == DocStatus.PENDING
    store.set_document_status("a", DocStatus.FAILED, "boom")
    doc = store.get_document("a")
    assert doc.status == DocStatus.FAILED and doc.error == "boom"
    assert [d.id for d in store.list_documents(DocStatus.FAILED)] == ["a"]
    assert store.find_document_by_hash("ha").id == "a"
    assert store.get_document("zz") is None


def test_nodes_edges_provenance(store: GraphStore) -> None:
    _two_documents(store)
    assert store.count_nodes() == {"chunk": 2, "document": 2, "entity": 3}
    assert store.count_edges()["OPENREL"] == 2
    assert store.get_node("ent:x").text == "X"
    assert [n.id for n in store.get_nodes(["ent:z", "nope", "ent:x"])] == ["ent:z", "ent:x"]
    assert {e.dst for e in store.edges_of("ent:x", "OPENREL")} == {"ent:y", "ent:z"}
    assert {p.doc_id for p in store.provenance("ent:x")} == {"a", "b"}
    assert store.provenance("ent:y")[0].start is None
    # adding the same node and edge again changes nothing
    store.add_nodes([Node("ent:x", "entity", "X")])
    store.add_edges([Edge("ent:x", "ent:y", "OPENREL", props={"predicate": "likes"})])
    assert store.count_edges()["OPENREL"] == 2


def test_remove_document_removes_only_what_it_alone_supported(store: GraphStore) -> None:
    _two_documents(store)
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


def test_vectors_roundtrip_and_missing(store: GraphStore) -> None:
    _two_documents(store)
    ids, vecs = store.get_vectors(["entity"])
    assert ids == ["ent:x", "ent:y", "ent:z"]
    np.testing.assert_array_equal(vecs, np.eye(3))
    assert {n.id for n in store.nodes_missing_vectors(["chunk", "entity"])} == {"chunk:a", "chunk:b"}
    with pytest.raises(ValueError):
        store.put_vectors(["a"], np.zeros((2, 3)))


def test_stages_failures_cache_usage(store: GraphStore) -> None:
    store.mark_done("extract", "a::c1")
    assert store.is_done("extract", "a::c1") and not store.is_done("extract", "a::c2")
    store.record_failure("extract", "k", "bad json")
    store.record_failure("extract", "k", "bad json again")
    assert store.failure_counts() == {"extract": 1}
    store.clear_failure("extract", "k")
    assert store.failure_counts() == {}
    store.cache_put("key", {"x": [1, 2]})
    assert store.cache_get("key") == {"x": [1, 2]} and store.cache_get("other") is None
    store.record_usage("s", 1, 10, 2, 0.5)
    store.record_usage("s", 2, 5, 1, 0.5)
    assert store.usage_totals()["s"] == {"calls": 3, "prompt_tokens": 15, "completion_tokens": 3, "seconds": 1.0}


def test_transaction_rolls_back_on_error(store: GraphStore) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.add_nodes([Node("n1", "entity", "n1")])
        raise RuntimeError("crash mid-batch")
    assert store.get_node("n1") is None


def test_delete_helpers(store: GraphStore) -> None:
    _two_documents(store)
    assert store.delete_edges_of_type("SYNONYM") == 1
    store.delete_node("ent:z")
    assert store.get_node("ent:z") is None and not store.edges_of("ent:z")
    assert store.delete_nodes_of_type("chunk") == 2


def test_reopen_keeps_data(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "i.db")
    s.add_nodes([Node("n", "entity", "N")])
    s.close()
    again = SQLiteStore(tmp_path / "i.db", create=False)
    assert again.get_node("n").text == "N"
    again.close()


def test_open_refuses_missing_corrupt_foreign_and_newer(tmp_path: Path) -> None:
    with pytest.raises(IndexFileError, match="no index"):
        SQLiteStore(tmp_path / "absent.db", create=False)
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(IndexFileError, match="not a thinkgraph index"):
        SQLiteStore(corrupt)
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE people(name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(IndexFileError, match="not a thinkgraph index"):
        SQLiteStore(foreign)
    newer = tmp_path / "newer.db"
    s = SQLiteStore(newer)
    s.set_meta("schema_version", "99")
    s.close()
    with pytest.raises(IndexFileError, match="schema version 99"):
        SQLiteStore(newer)
    with pytest.raises(IndexFileError, match="directory"):
        SQLiteStore(tmp_path)
