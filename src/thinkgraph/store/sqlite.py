"""Embedded store: one SQLite file (WAL) holding the whole index, its vectors and the LLM cache."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from thinkgraph.errors import IndexFileError
from thinkgraph.ids import document_node_id
from thinkgraph.models import DocStatus, DocumentRecord, Edge, Node, Provenance
from thinkgraph.store import sqlite_changes
from thinkgraph.store.base import CHANGE_LOG_KEEP, ChangeSet, RemovalReport
from thinkgraph.store.common import (
    APP_MARKER,
    CHANGES,
    DERIVED_STALE,
    SCHEMA_VERSION,
    Revisions,
    document_from,
    edge_key,
    edge_row,
    node_from,
    node_row,
    provenance_from,
    provenance_row,
)
from thinkgraph.store.sqlite_bookkeeping import SQLiteBookkeeping
from thinkgraph.store.sqlite_connect import BUSY_TIMEOUT_S, connect_index
from thinkgraph.store.sqlite_edges import SQLiteEdgeQueries
from thinkgraph.store.sqlite_schema import create_schema, missing_indexes, upgrade_indexes
from thinkgraph.store.sqlite_vectors import SQLiteVectors

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]


class SQLiteStore(SQLiteEdgeQueries, SQLiteVectors, SQLiteBookkeeping, Revisions):
    """GraphStore over one SQLite file. Safe to share between threads (one lock). Its parts: the
    edge reads (sqlite_edges), the vectors (sqlite_vectors), the bookkeeping (sqlite_bookkeeping), the
    schema (sqlite_schema), the connection (sqlite_connect) and the change log (sqlite_changes)."""

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool | None = None) -> None:
        """``read_only`` None: read-only exactly when the file exists and this process may not write it
        (every read works; a write is a one-line error naming the file)."""
        self.path = Path(path)
        self.location = str(self.path)
        if not create and not self.path.exists():
            raise IndexFileError(f"no index at {self.path}; build one with `thinkgraph index`")
        if self.path.exists() and self.path.is_dir():
            raise IndexFileError(f"{self.path} is a directory, not an index file")
        if not create and self.path.stat().st_size == 0:  # (SQLite would take it for a new database)
            raise IndexFileError(f"{self.path} is an empty file, not an index; build one with `thinkgraph index`")
        self.read_only = read_only if read_only is not None else \
            self.path.exists() and not os.access(self.path, os.W_OK)
        self._lock = threading.RLock()
        self._depth = 0
        try:
            if not self.read_only and self.path.exists():
                self._refuse_foreign_file()
            self._db = connect_index(self.path, read_only=self.read_only)
            self._check_or_init()
        except sqlite3.DatabaseError as exc:
            folder = self.path.parent
            if not folder.is_dir():
                raise IndexFileError(f"cannot create {self.path}: the folder {folder} does not exist "
                                     "(create it first, or give another --index)") from exc
            if not self.read_only and not os.access(folder, os.W_OK):
                raise IndexFileError(f"cannot write {self.path}: the folder {folder} is read-only (SQLite keeps its "
                                     "journal beside the index); copy the index to a writable folder") from exc
            raise IndexFileError(f"{self.path} is not a thinkgraph index (corrupt or foreign file: {exc})") from exc

    # manifest ---------------------------------------------------------------
    def _refuse_foreign_file(self) -> None:
        """Refuses another program's SQLite file before the writable connection switches it to WAL (which
        would rewrite its header), reading it through a read-only connection."""
        uri = self.path.resolve().as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)) as probe:
            tables = {r[0] for r in probe.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            app = probe.execute("SELECT value FROM meta WHERE key='app'").fetchone() if "meta" in tables else None
        if tables and (app is None or app[0] != APP_MARKER):
            raise IndexFileError(f"{self.path} is an SQLite file but not a thinkgraph index")

    def _check_or_init(self) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            with self.transaction():
                create_schema(self._db, new=True)
                self.set_meta("app", APP_MARKER)
                self.set_meta("schema_version", str(SCHEMA_VERSION))
            return
        if "meta" not in tables:
            raise IndexFileError(f"{self.path} is an SQLite file but not a thinkgraph index")
        if self.get_meta("app") != APP_MARKER:
            raise IndexFileError(f"{self.path} is an SQLite file but not a thinkgraph index")
        version = self.get_meta("schema_version")
        if version != str(SCHEMA_VERSION):
            raise IndexFileError(
                f"{self.path} has index schema version {version}; this thinkgraph reads version "
                f"{SCHEMA_VERSION} (rebuild the index)"
            )
        if not self.read_only:
            with self.transaction():
                create_schema(self._db, new=False)  # tables added within a schema version are created if missing
                if self.content_revision() is None:  # an index from before revisions were kept
                    self._revise()

    def upgrade_indexes(self) -> list[str]:
        """Indexes that an index made by an earlier version lacks, created now (their names)."""
        missing = missing_indexes(self._db)
        if self.read_only or not missing:
            return []
        with self.transaction():
            upgrade_indexes(self._db, missing)
        return missing

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def increment_meta(self, key: str) -> int:
        with self.transaction():  # BEGIN IMMEDIATE: no other writer between the read and the write
            value = int(self.get_meta(key) or 0) + 1
            self.set_meta(key, str(value))
        return value

    def describe(self) -> str:
        return str(self.path)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Nested use joins the outer transaction; the outermost commits or rolls back."""
        if self.read_only:
            raise IndexFileError(f"{self.path} is read-only (this user may not write it); copy it, or ask "
                                 "its owner to index")
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outer:
                    self._db.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self._db.execute("COMMIT")

    @contextmanager
    def page_cache(self, kib: int) -> Iterator[None]:
        with self._lock:
            before = int(self._db.execute("PRAGMA cache_size").fetchone()[0])
            page = int(self._db.execute("PRAGMA page_size").fetchone()[0])
            before_kib = -before if before < 0 else before * page // 1024  # (negative: KiB; positive: pages)
            kib = min(int(kib), 2**31 - 1)  # (SQLite reads a larger one as 0: no cache at all)
            if kib > before_kib:
                self._db.execute(f"PRAGMA cache_size=-{kib}")
        try:
            yield
        finally:
            with self._lock:
                self._db.execute(f"PRAGMA cache_size={before}")  # (SQLite then frees the pages over it)

    def backup(self, target: str | Path) -> None:
        """A consistent copy of this index at ``target`` (SQLite's online backup; safe while in use)."""
        copy = sqlite3.connect(str(target))
        try:
            with self._lock:
                self._db.backup(copy)
        finally:
            copy.close()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # documents --------------------------------------------------------------
    def upsert_document(self, doc: DocumentRecord) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO documents(id, source, title, content_hash, status, error, n_chars, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (doc.id, doc.source, doc.title, doc.content_hash, str(doc.status), doc.error, doc.n_chars,
                 time.time()),
            )

    _doc = staticmethod(document_from)

    _DOC_COLS = "id, source, title, content_hash, status, error, n_chars"

    def get_document(self, doc_id: str) -> DocumentRecord | None:
        row = self._db.execute(f"SELECT {self._DOC_COLS} FROM documents WHERE id=?", (doc_id,)).fetchone()
        return None if row is None else self._doc(row)

    def find_document_by_hash(self, content_hash: str) -> DocumentRecord | None:
        row = self._db.execute(
            f"SELECT {self._DOC_COLS} FROM documents WHERE content_hash=? LIMIT 1", (content_hash,)
        ).fetchone()
        return None if row is None else self._doc(row)

    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRecord]:
        if status is None:
            rows = self._db.execute(f"SELECT {self._DOC_COLS} FROM documents ORDER BY id")
        else:
            rows = self._db.execute(
                f"SELECT {self._DOC_COLS} FROM documents WHERE status=? ORDER BY id", (str(status),)
            )
        return [self._doc(r) for r in rows]

    def set_document_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None:
        with self.transaction():
            self._db.execute("UPDATE documents SET status=?, error=?, updated=? WHERE id=?",
                             (str(status), error, time.time(), doc_id))

    def remove_document(self, doc_id: str) -> RemovalReport:
        """Remove a document and every node and edge that only it supported."""
        with self.transaction():
            db = self._db
            db.execute("CREATE TEMP TABLE IF NOT EXISTS _cand(item_id TEXT PRIMARY KEY)")
            db.execute("DELETE FROM _cand")
            db.execute("INSERT OR IGNORE INTO _cand SELECT item_id FROM provenance WHERE doc_id=?", (doc_id,))
            db.execute("DELETE FROM provenance WHERE doc_id=?", (doc_id,))
            # EXISTS searches provenance's index per candidate; IN (SELECT ...) read the whole table per removal
            db.execute("DELETE FROM _cand WHERE EXISTS (SELECT 1 FROM provenance p WHERE p.item_id = _cand.item_id)")
            doc_node = document_node_id(doc_id)
            db.execute("INSERT OR IGNORE INTO _cand VALUES (?)", (doc_node,))
            # a join: "item_id IN (SELECT id FROM nodes)" walked the whole nodes index (60 ms at 100k passages)
            orphan_nodes = "SELECT c.item_id FROM _cand c JOIN nodes n ON n.id = c.item_id"
            edges_removed = db.execute(
                f"DELETE FROM edges WHERE id IN (SELECT item_id FROM _cand) OR src IN ({orphan_nodes})"
                f" OR dst IN ({orphan_nodes})"
            ).rowcount
            db.execute(f"DELETE FROM vectors WHERE node_id IN ({orphan_nodes})")
            nodes_removed = db.execute(f"DELETE FROM nodes WHERE id IN ({orphan_nodes})").rowcount
            db.execute("DELETE FROM documents WHERE id=?", (doc_id,))
            prefix = f"{doc_id}::"  # a key range, compared exactly: LIKE would read '_' and '%' as wildcards
            stage = db.execute("SELECT MIN(stage) FROM stages").fetchone()[0]
            while stage is not None:  # stage by stage, so the range uses the (stage, key) primary key
                # two statements: with "key=? OR (a range)" SQLite scanned the stage's every key (13 ms at 100k)
                db.execute("DELETE FROM stages WHERE stage=? AND key=?", (stage, doc_id))
                db.execute("DELETE FROM stages WHERE stage=? AND key>=? AND key<?", (stage, prefix, f"{doc_id}:;"))
                stage = db.execute("SELECT MIN(stage) FROM stages WHERE stage>?", (stage,)).fetchone()[0]
            db.execute("DELETE FROM _cand")
            self.set_meta(DERIVED_STALE, "1")
            self.increment_meta(CHANGES)
            self._revise()
        return RemovalReport(doc_id=doc_id, nodes_removed=nodes_removed, edges_removed=edges_removed)

    # graph ------------------------------------------------------------------
    def add_nodes(self, nodes: Iterable[Node]) -> None:
        rows = [node_row(n) for n in nodes]
        with self.transaction():
            self._db.executemany("INSERT OR IGNORE INTO nodes(id, type, text, props) VALUES (?, ?, ?, ?)", rows)
            self._revise()

    def update_node(self, node: Node) -> None:
        with self.transaction():
            self._db.execute("UPDATE nodes SET text=?, props=? WHERE id=?",
                             (node.text, json.dumps(node.props, ensure_ascii=False), node.id))
            self._revise()

    def add_edges(self, edges: Iterable[Edge]) -> None:
        rows = [edge_row(e) for e in edges]
        with self.transaction():
            self._db.executemany(
                "INSERT OR IGNORE INTO edges(id, src, dst, type, weight, props) VALUES (?, ?, ?, ?, ?, ?)", rows
            )
            self._revise()

    def add_provenance(self, records: Iterable[Provenance]) -> None:
        rows = [provenance_row(p) for p in records]
        with self.transaction():
            self._db.executemany("INSERT OR IGNORE INTO provenance VALUES (?, ?, ?, ?, ?)", rows)

    _node = staticmethod(node_from)

    def get_node(self, node_id: str) -> Node | None:
        row = self._db.execute("SELECT id, type, text, props FROM nodes WHERE id=?", (node_id,)).fetchone()
        return None if row is None else self._node(row)

    def get_nodes(self, node_ids: Sequence[str]) -> list[Node]:
        found: dict[str, Node] = {}
        ids = list(dict.fromkeys(node_ids))
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ",".join("?" * len(part))
            for row in self._db.execute(f"SELECT id, type, text, props FROM nodes WHERE id IN ({marks})", part):
                found[row[0]] = self._node(row)
        return [found[i] for i in ids if i in found]

    def iter_nodes(self, node_type: str | None = None) -> Iterator[Node]:
        if node_type is None:
            rows = self._db.execute("SELECT id, type, text, props FROM nodes ORDER BY rowid").fetchall()
        else:
            rows = self._db.execute("SELECT id, type, text, props FROM nodes WHERE type=? ORDER BY rowid",
                                    (node_type,)).fetchall()
        return (self._node(r) for r in rows)

    def provenance(self, item_id: str) -> list[Provenance]:
        rows = self._db.execute(
            "SELECT item_id, doc_id, chunk_id, start, end FROM provenance WHERE item_id=? ORDER BY doc_id, start",
            (item_id,))
        return [provenance_from(r) for r in rows]

    def delete_node(self, node_id: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM edges WHERE src=? OR dst=?", (node_id, node_id))
            self._db.execute("DELETE FROM vectors WHERE node_id=?", (node_id,))
            self._db.execute("DELETE FROM nodes WHERE id=?", (node_id,))
            self._revise()

    def delete_edges(self, edges: Iterable[Edge]) -> int:
        return self._delete_keyed("edges", "id", [edge_key(e) for e in edges])

    def _delete_keyed(self, table: str, column: str, keys: Sequence[str]) -> int:
        """Rows of ``table`` whose ``column`` is one of ``keys``, 500 to a statement; how many went."""
        unique = list(dict.fromkeys(keys))
        gone = 0
        with self.transaction():
            for start in range(0, len(unique), 500):
                part = unique[start:start + 500]
                gone += self._db.execute(f"DELETE FROM {table} WHERE {column} IN ({','.join('?' * len(part))})",
                                         part).rowcount
            self._revise()
        return gone

    def delete_edges_of_type(self, edge_type: str) -> int:
        with self.transaction():
            self._revise()
            return self._db.execute("DELETE FROM edges WHERE type=?", (str(edge_type),)).rowcount

    def delete_nodes_of_type(self, node_type: str) -> int:
        with self.transaction():
            ids = "SELECT id FROM nodes WHERE type=?"
            t = str(node_type)
            self._db.execute(f"DELETE FROM edges WHERE src IN ({ids}) OR dst IN ({ids})", (t, t))
            self._db.execute(f"DELETE FROM vectors WHERE node_id IN ({ids})", (t,))
            self._revise()
            return self._db.execute("DELETE FROM nodes WHERE type=?", (t,)).rowcount

    def count_nodes(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT type, COUNT(*) FROM nodes GROUP BY type ORDER BY type").fetchall())

    def count_edges(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT type, COUNT(*) FROM edges GROUP BY type ORDER BY type").fetchall())

    # vectors ----------------------------------------------------------------
    def delete_vectors(self, node_ids: Sequence[str]) -> int:
        return self._delete_keyed("vectors", "node_id", node_ids)

    # change log -------------------------------------------------------------
    def log_changes(self, keep: int = CHANGE_LOG_KEEP) -> None:
        with self.transaction():
            sqlite_changes.start(self._db, keep)

    def change_position(self) -> int | None:
        return sqlite_changes.position(self._db)

    def changes_since(self, position: int, revision: str | None = None) -> ChangeSet | None:
        return sqlite_changes.since(self._db, position, revision)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
