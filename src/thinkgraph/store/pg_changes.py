"""The change log of a PostgreSQL index (``ChangeLog`` in store/base.py): one trigger function logs every
row written to or deleted from nodes, edges and vectors, whichever statement did it, from ``log_changes``
on (an index's first build writes no log). Writers take the index's write lock, so the log's order is
the order of the commits."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from thinkgraph.store.base import CHANGE_LOG_KEEP, ChangeSet
from thinkgraph.store.change_rows import CHANGE_LOG_FROM, REVISION, change_set

TRIGGERS = ("log_nodes", "log_edges", "log_vectors", "log_revision")
# search_path fixed at creation: the function writes its own schema's log whoever's statement fires it
_START = """
CREATE TABLE IF NOT EXISTS changes(seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, kind text NOT NULL,
    a text NOT NULL, b text NOT NULL);
CREATE OR REPLACE FUNCTION log_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_TABLE_NAME = 'edges' THEN
        IF TG_OP <> 'INSERT' THEN INSERT INTO changes(kind, a, b) VALUES ('edge', OLD.src, OLD.dst); END IF;
        IF TG_OP <> 'DELETE' THEN INSERT INTO changes(kind, a, b) VALUES ('edge', NEW.src, NEW.dst); END IF;
    ELSIF TG_TABLE_NAME = 'nodes' THEN
        IF TG_OP <> 'INSERT' THEN INSERT INTO changes(kind, a, b) VALUES ('node', OLD.id, ''); END IF;
        IF TG_OP <> 'DELETE' THEN INSERT INTO changes(kind, a, b) VALUES ('node', NEW.id, ''); END IF;
    ELSE
        IF TG_OP <> 'INSERT' THEN INSERT INTO changes(kind, a, b) VALUES ('vector', OLD.node_id, ''); END IF;
        IF TG_OP <> 'DELETE' THEN INSERT INTO changes(kind, a, b) VALUES ('vector', NEW.node_id, ''); END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION log_revision() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.key = 'content_revision' THEN INSERT INTO changes(kind, a, b) VALUES ('revision', NEW.value, ''); END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER log_revision AFTER INSERT OR UPDATE ON meta FOR EACH ROW EXECUTE FUNCTION log_revision();
CREATE OR REPLACE TRIGGER log_nodes AFTER INSERT OR UPDATE OR DELETE ON nodes FOR EACH ROW
    EXECUTE FUNCTION log_change();
CREATE OR REPLACE TRIGGER log_edges AFTER INSERT OR UPDATE OR DELETE ON edges FOR EACH ROW
    EXECUTE FUNCTION log_change();
CREATE OR REPLACE TRIGGER log_vectors AFTER INSERT OR UPDATE OR DELETE ON vectors FOR EACH ROW
    EXECUTE FUNCTION log_change();
"""


class PgChanges:
    """Mixed into the PostgreSQL store (uses its connection helpers and write transaction)."""

    _rows: Any
    _run: Any
    _conn: Any
    _lock: Any
    transaction: Any

    def _changes_running(self) -> bool:
        rows = self._rows("SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
                          " WHERE c.relnamespace = current_schema()::regnamespace AND t.tgname = ANY(%s)",
                          (list(TRIGGERS),))
        return int(rows[0][0]) == len(TRIGGERS)

    def _changes_last(self) -> int:
        rows = self._rows("SELECT greatest(coalesce((SELECT max(seq) FROM changes), 0),"
                          " coalesce((SELECT value::bigint FROM meta WHERE key = %s), 0))", (CHANGE_LOG_FROM,))
        return int(rows[0][0])

    def log_changes(self, keep: int = CHANGE_LOG_KEEP) -> None:
        transaction: AbstractContextManager[None] = self.transaction()
        if self._changes_running():
            cutoff = self._changes_last() - keep
            started = self._rows("SELECT value FROM meta WHERE key = %s", (CHANGE_LOG_FROM,))
            if started and cutoff > int(started[0][0]):
                with transaction:
                    self._run("DELETE FROM changes WHERE seq <= %s", (cutoff,))
                    self._run("UPDATE meta SET value = %s WHERE key = %s", (str(cutoff), CHANGE_LOG_FROM))
            return
        with transaction:
            with self._lock:
                self._conn.execute(_START)  # (no parameters: several statements in one)
            # (the revision of the moment, so that a view of it can be followed from here)
            self._run("INSERT INTO changes(kind, a, b) SELECT %s, value, '' FROM meta WHERE key = 'content_revision'",
                      (REVISION,))
            self._run("INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value ="
                      " excluded.value", (CHANGE_LOG_FROM, str(self._changes_last())))

    def change_position(self) -> int | None:
        return self._changes_last() if self._changes_running() else None

    def changes_since(self, position: int, revision: str | None = None) -> ChangeSet | None:
        if not self._changes_running():
            return None
        started = self._rows("SELECT value FROM meta WHERE key = %s", (CHANGE_LOG_FROM,))
        if not started or position < int(started[0][0]) or position > self._changes_last():
            return None
        if revision is not None:
            marked = self._rows("SELECT a FROM changes WHERE kind = %s AND seq <= %s ORDER BY seq DESC LIMIT 1",
                                (REVISION, position))
            if not marked or marked[0][0] != revision:
                return None
        rows: Sequence[tuple[str, str, str]] = self._rows("SELECT kind, a, b FROM changes WHERE seq > %s",
                                                          (position,))
        return change_set(rows)
