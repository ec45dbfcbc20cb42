"""PostgreSQL + pgvector store: the whole index in one schema of a shared database, so that service
workers and indexing processes on many machines use one index.

Writes are serialised per index by a transaction-level advisory lock, the database counterpart of
SQLite's single writer (``BEGIN IMMEDIATE``): a transaction sees no other writer between its reads and
its writes, so nothing is lost and no two writers deadlock over the same nodes; reads never wait."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from thinkgraph.ids import document_node_id
from thinkgraph.models import DocStatus, DocumentRecord, Edge, Node, Provenance
from thinkgraph.store.base import RemovalReport
from thinkgraph.store.common import (
    CHANGES,
    DERIVED_STALE,
    Revisions,
    document_from,
    edge_from,
    edge_key,
    edge_row,
    node_from,
    node_row,
    provenance_from,
    provenance_row,
)
from thinkgraph.store.pg_bookkeeping import PgBookkeeping
from thinkgraph.store.pg_changes import PgChanges
from thinkgraph.store.pg_location import PgLocation, parse_location
from thinkgraph.store.pg_schema import TABLES, connect, lock_key, open_schema
from thinkgraph.store.pg_vectors import PgVectors

_DOC_COLS = "id, source, title, content_hash, status, error, n_chars"
_NODE_COLS = "id, type, text, props"
_EDGE_COLS = "src, dst, type, weight, props"


class PostgresStore(PgVectors, PgBookkeeping, PgChanges, Revisions):
    """GraphStore in one PostgreSQL schema. Safe to share between threads (one connection, one lock)."""

    # A database index has no read-only mode: a user without write rights gets the server's error on
    # the first write (SQLite's is for an index file this user may not write).
    read_only: bool = False

    def __init__(self, target: PgLocation | str, *, create: bool = True) -> None:
        self._target = target if isinstance(target, PgLocation) else parse_location(target)
        self.location = self._target.url
        self.path = self._target.cache_dir() / "index"  # the typed graph is kept in {path}.kg
        self._lock = threading.RLock()
        self._depth = 0
        self._write_key = lock_key(self._target.schema)
        self._conn = connect(self._target)
        try:
            open_schema(self._conn, self._target, create=create)
        except BaseException:
            self._conn.close()
            raise
        self._dim: int | None = None
        self._hnsw: set[str] = set()

    # plumbing -------------------------------------------------------------------------------
    def _rows(self, query: Any, params: Sequence[Any] = (), *, binary: bool = False) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(query, params, binary=binary).fetchall()

    def _run(self, query: Any, params: Sequence[Any] = ()) -> int:
        with self._lock:
            return self._conn.execute(query, params).rowcount

    def _many(self, query: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            with self._lock, self._conn.cursor() as cur:
                cur.executemany(query, rows)

    @contextmanager
    def page_cache(self, kib: int) -> Iterator[None]:
        yield  # the server's shared_buffers are the page cache

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Nested use joins the outer transaction; the outermost commits or rolls back. The outermost
        takes the index's write lock first (released at commit or rollback)."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            try:
                with self._conn.transaction():
                    self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._write_key,))
                    yield
            except BaseException:
                self._dim = None  # a rolled-back transaction may have typed the vector column
                raise
            finally:
                self._depth = 0

    @contextmanager
    def _claim_transaction(self) -> Iterator[None]:
        """A transaction without the write lock: claims never wait for a writer of the index. Its
        commit does not wait for the disk: a lease lost in a server crash only expires early."""
        with self._lock:
            if self._depth:
                yield
                return
            with self._conn.transaction():
                self._conn.execute("SET LOCAL synchronous_commit TO off")
                yield

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def describe(self) -> str:
        return self._target.display

    def size_bytes(self) -> int:
        rows = self._rows("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                          " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'"
                          " AND c.relname = ANY(%s)", (self._target.schema, list(TABLES)))
        return int(rows[0][0])

    # manifest ---------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = %s", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self._run("INSERT INTO meta(key, value) VALUES (%s, %s)"
                      " ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def increment_meta(self, key: str) -> int:
        with self.transaction():
            rows = self._rows("INSERT INTO meta(key, value) VALUES (%s, '1') ON CONFLICT (key) DO UPDATE"
                              " SET value = (meta.value::bigint + 1)::text RETURNING value", (key,))
        return int(rows[0][0])

    # documents --------------------------------------------------------------------------------
    def upsert_document(self, doc: DocumentRecord) -> None:
        with self.transaction():
            self._run("INSERT INTO documents(id, source, title, content_hash, status, error, n_chars, updated)"
                      " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET"
                      " source = excluded.source, title = excluded.title, content_hash = excluded.content_hash,"
                      " status = excluded.status,"
                      " error = excluded.error, n_chars = excluded.n_chars, updated = excluded.updated",
                      (doc.id, doc.source, doc.title, doc.content_hash, str(doc.status), doc.error, doc.n_chars,
                       time.time()))

    _doc = staticmethod(document_from)

    def get_document(self, doc_id: str) -> DocumentRecord | None:
        rows = self._rows(f"SELECT {_DOC_COLS} FROM documents WHERE id = %s", (doc_id,))
        return self._doc(rows[0]) if rows else None

    def find_document_by_hash(self, content_hash: str) -> DocumentRecord | None:
        rows = self._rows(f"SELECT {_DOC_COLS} FROM documents WHERE content_hash = %s ORDER BY id LIMIT 1",
                          (content_hash,))
        return self._doc(rows[0]) if rows else None

    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRecord]:
        if status is None:
            return [self._doc(r) for r in self._rows(f"SELECT {_DOC_COLS} FROM documents ORDER BY id")]
        rows = self._rows(f"SELECT {_DOC_COLS} FROM documents WHERE status = %s ORDER BY id", (str(status),))
        return [self._doc(r) for r in rows]

    def set_document_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None:
        with self.transaction():
            self._run("UPDATE documents SET status = %s, error = %s, updated = %s WHERE id = %s",
                      (str(status), error, time.time(), doc_id))

    def remove_document(self, doc_id: str) -> RemovalReport:
        """Remove a document and every node and edge that only it supported."""
        orphans = "SELECT c.item_id FROM _cand c JOIN nodes n ON n.id = c.item_id"
        with self.transaction():
            self._run("CREATE TEMP TABLE IF NOT EXISTS _cand(item_id text COLLATE \"C\" PRIMARY KEY)"
                      " ON COMMIT DELETE ROWS")
            self._run("INSERT INTO _cand SELECT DISTINCT item_id FROM provenance WHERE doc_id = %s", (doc_id,))
            self._run("DELETE FROM provenance WHERE doc_id = %s", (doc_id,))
            self._run("DELETE FROM _cand c WHERE EXISTS (SELECT 1 FROM provenance p WHERE p.item_id = c.item_id)")
            self._run("INSERT INTO _cand VALUES (%s) ON CONFLICT DO NOTHING", (document_node_id(doc_id),))
            # three deletes: PostgreSQL reads the whole edges table for one WHERE joining them with OR
            edges_removed = sum(self._run(f"DELETE FROM edges WHERE {column} IN ({source})")
                                for column, source in (("id", "SELECT item_id FROM _cand"), ("src", orphans),
                                                       ("dst", orphans)))
            self._run(f"DELETE FROM vectors WHERE node_id IN ({orphans})")
            nodes_removed = self._run(f"DELETE FROM nodes WHERE id IN ({orphans})")
            self._run("DELETE FROM documents WHERE id = %s", (doc_id,))
            stage = self._rows("SELECT min(stage) FROM stages")[0][0]
            while stage is not None:  # stage by stage, so the key range uses the (stage, key) primary key
                # two statements, each on the primary key (as SQLite's: one OR there scanned the stage)
                self._run("DELETE FROM stages WHERE stage = %s AND key = %s", (stage, doc_id))
                self._run("DELETE FROM stages WHERE stage = %s AND key >= %s AND key < %s",
                          (stage, f"{doc_id}::", f"{doc_id}:;"))
                stage = self._rows("SELECT min(stage) FROM stages WHERE stage > %s", (stage,))[0][0]
            self._run("DELETE FROM _cand")
            self.set_meta(DERIVED_STALE, "1")
            self.increment_meta(CHANGES)
            self._revise()
        return RemovalReport(doc_id=doc_id, nodes_removed=nodes_removed, edges_removed=edges_removed)

    # graph ------------------------------------------------------------------------------------
    def add_nodes(self, nodes: Iterable[Node]) -> None:
        rows = [node_row(n) for n in nodes]
        with self.transaction():
            self._many("INSERT INTO nodes(id, type, text, props) VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                       rows)
            self._revise()

    def update_node(self, node: Node) -> None:
        with self.transaction():
            self._run("UPDATE nodes SET text = %s, props = %s WHERE id = %s",
                      (node.text, json.dumps(node.props, ensure_ascii=False), node.id))
            self._revise()

    def add_edges(self, edges: Iterable[Edge]) -> None:
        rows = [edge_row(e) for e in edges]
        with self.transaction():
            self._many("INSERT INTO edges(id, src, dst, type, weight, props) VALUES (%s, %s, %s, %s, %s, %s)"
                       " ON CONFLICT (id) DO NOTHING", rows)
            self._revise()

    def add_provenance(self, records: Iterable[Provenance]) -> None:
        rows = [provenance_row(p) for p in records]
        with self.transaction():
            self._many('INSERT INTO provenance(item_id, doc_id, chunk_id, start, "end") VALUES (%s, %s, %s, %s, %s)'
                       " ON CONFLICT DO NOTHING", rows)

    _node = staticmethod(node_from)

    _edge = staticmethod(edge_from)

    def get_node(self, node_id: str) -> Node | None:
        rows = self._rows(f"SELECT {_NODE_COLS} FROM nodes WHERE id = %s", (node_id,))
        return self._node(rows[0]) if rows else None

    def get_nodes(self, node_ids: Sequence[str]) -> list[Node]:
        ids = list(dict.fromkeys(node_ids))
        found = {r[0]: self._node(r) for r in self._rows(f"SELECT {_NODE_COLS} FROM nodes WHERE id = ANY(%s)", (ids,))}
        return [found[i] for i in ids if i in found]

    def iter_nodes(self, node_type: str | None = None) -> Iterator[Node]:
        if node_type is None:
            rows = self._rows(f"SELECT {_NODE_COLS} FROM nodes ORDER BY seq")
        else:
            rows = self._rows(f"SELECT {_NODE_COLS} FROM nodes WHERE type = %s ORDER BY seq", (str(node_type),))
        return (self._node(r) for r in rows)

    def iter_edges(self, edge_types: Iterable[str] | None = None) -> Iterator[Edge]:
        if edge_types is None:
            rows = self._rows(f"SELECT {_EDGE_COLS} FROM edges ORDER BY seq")
        else:
            rows = self._rows(f"SELECT {_EDGE_COLS} FROM edges WHERE type = ANY(%s) ORDER BY seq",
                              ([str(t) for t in edge_types],))
        return (self._edge(r) for r in rows)

    def edge_columns(self, edge_types: Iterable[str]) -> tuple[list[str], list[str], list[float]]:
        rows = self._rows("SELECT src, dst, weight FROM edges WHERE type = ANY(%s) ORDER BY seq",
                          ([str(t) for t in edge_types],))
        return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]

    def edges_of(self, node_id: str, edge_type: str | None = None) -> list[Edge]:
        # Two index lookups (edges_src, edges_dst) rather than one OR that a planner may answer by a scan.
        typed = " AND type = %s" if edge_type is not None else ""
        one = [str(edge_type)] if edge_type is not None else []
        query = (f"SELECT {_EDGE_COLS} FROM (SELECT * FROM edges WHERE src = %s{typed} UNION ALL "
                 f"SELECT * FROM edges WHERE dst = %s AND src <> %s{typed}) AS e ORDER BY seq")
        return [self._edge(r) for r in self._rows(query, [node_id, *one, node_id, node_id, *one])]

    def edges_among(self, node_ids: Sequence[str]) -> list[Edge]:
        ids = list(dict.fromkeys(node_ids))
        rows = self._rows(f"SELECT {_EDGE_COLS} FROM edges WHERE src = ANY(%s) AND dst = ANY(%s) ORDER BY seq",
                          (ids, ids))
        return [self._edge(r) for r in rows]

    def upgrade_indexes(self) -> list[str]:
        return []  # (the schema's indexes are created with it)

    def edges_between(self, pairs: Sequence[tuple[str, str]]) -> list[Edge]:
        unique = list(dict.fromkeys((a, b) for a, b in pairs if a != b))
        if not unique:
            return []
        firsts, seconds = [a for a, _ in unique], [b for _, b in unique]
        rows = self._rows(f"SELECT DISTINCT e.seq, {', '.join('e.' + c.strip() for c in _EDGE_COLS.split(','))} "
                          "FROM unnest(%s::text[], %s::text[]) AS p(a, b) JOIN edges e ON "
                          "(e.src = p.a AND e.dst = p.b) OR (e.dst = p.a AND e.src = p.b) ORDER BY e.seq",
                          (firsts, seconds))
        return [self._edge(r[1:]) for r in rows]

    def edges_from(self, node_ids: Sequence[str], among: Sequence[str]) -> list[Edge]:
        ids, others = list(dict.fromkeys(node_ids)), list(dict.fromkeys(among))
        if not ids or not others:
            return []
        # two lookups through the node_ids end (edges_src, edges_dst), never a hub's edges in among
        rows = self._rows(f"SELECT {_EDGE_COLS} FROM (SELECT * FROM edges WHERE src = ANY(%s) AND dst = ANY(%s) "
                          "UNION SELECT * FROM edges WHERE dst = ANY(%s) AND src = ANY(%s)) AS e ORDER BY seq",
                          (ids, others, ids, others))
        return [self._edge(r) for r in rows]

    def provenance(self, item_id: str) -> list[Provenance]:
        rows = self._rows('SELECT item_id, doc_id, chunk_id, start, "end" FROM provenance WHERE item_id = %s'
                          " ORDER BY doc_id, start", (item_id,))
        return [provenance_from(r) for r in rows]

    def delete_node(self, node_id: str) -> None:
        with self.transaction():
            self._run("DELETE FROM edges WHERE src = %s OR dst = %s", (node_id, node_id))
            self._run("DELETE FROM vectors WHERE node_id = %s", (node_id,))
            self._run("DELETE FROM nodes WHERE id = %s", (node_id,))
            self._revise()

    def delete_edges(self, edges: Iterable[Edge]) -> int:
        keys = list(dict.fromkeys(edge_key(e) for e in edges))
        with self.transaction():
            self._revise()
            return self._run("DELETE FROM edges WHERE id = ANY(%s)", (keys,)) if keys else 0

    def delete_edges_of_type(self, edge_type: str) -> int:
        with self.transaction():
            self._revise()
            return self._run("DELETE FROM edges WHERE type = %s", (str(edge_type),))

    def delete_nodes_of_type(self, node_type: str) -> int:
        ids = "SELECT id FROM nodes WHERE type = %s"
        t = str(node_type)
        with self.transaction():
            self._run(f"DELETE FROM edges WHERE src IN ({ids}) OR dst IN ({ids})", (t, t))
            self._run(f"DELETE FROM vectors WHERE node_id IN ({ids})", (t,))
            self._revise()
            return self._run("DELETE FROM nodes WHERE type = %s", (t,))

    def count_nodes(self) -> dict[str, int]:
        return dict(self._rows("SELECT type, count(*) FROM nodes GROUP BY type ORDER BY type"))

    def count_edges(self) -> dict[str, int]:
        return dict(self._rows("SELECT type, count(*) FROM edges GROUP BY type ORDER BY type"))
