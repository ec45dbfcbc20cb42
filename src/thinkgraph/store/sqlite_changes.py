"""The change log of an SQLite index (``ChangeLog`` in store/base.py), kept by triggers on the nodes,
edges and vectors tables: every write path is logged, bulk deletes included, without any of them
knowing. The triggers exist from ``start`` on; an index's first build writes no log (nothing derived
from it is older than it), so it pays nothing for one."""

from __future__ import annotations

import sqlite3

from thinkgraph.store.base import ChangeSet
from thinkgraph.store.change_rows import CHANGE_LOG_FROM, REVISION, change_set

TABLE = ("CREATE TABLE IF NOT EXISTS changes(seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, "
         "a TEXT NOT NULL, b TEXT NOT NULL)")
# What each table's rows log: (kind, first column, second column or '').
_LOGGED = {"nodes": ("node", "id", None), "edges": ("edge", "src", "dst"), "vectors": ("vector", "node_id", None)}


def _values(kind: str, row: str, a: str, b: str | None) -> str:
    return f"('{kind}', {row}.{a}, {f'{row}.{b}' if b else repr('')})"


def _triggers() -> dict[str, str]:
    out = {}
    for table, (kind, a, b) in _LOGGED.items():
        for event, rows in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            values = ", ".join(_values(kind, row, a, b) for row in rows)
            out[f"log_{table}_{event.lower()}"] = (f"AFTER {event} ON {table} BEGIN "
                                                   f"INSERT INTO changes(kind, a, b) VALUES {values}; END")
    return out


# Each content revision is logged as it is set (store/common.py ``Revisions``): a position is then known
# to belong to a revision, so a log that restarted (an index built anew at the same path) or went
# another way (a backup put back) is not mistaken for the one a view was built from.
_REVISION = ("AFTER {event} ON meta WHEN NEW.key = 'content_revision' BEGIN "
             "INSERT INTO changes(kind, a, b) VALUES ('revision', NEW.value, ''); END")
TRIGGERS = {**_triggers(), **{f"log_revision_{e.lower()}": _REVISION.format(event=e) for e in ("INSERT", "UPDATE")}}


def start(db: sqlite3.Connection, keep: int) -> None:
    """Create the log and its triggers if missing, else drop all but its last ``keep`` rows (inside the
    caller's transaction)."""
    if _running(db):
        cutoff = _last(db) - keep
        started = db.execute("SELECT value FROM meta WHERE key=?", (CHANGE_LOG_FROM,)).fetchone()
        if started is not None and cutoff > int(started[0]):
            db.execute("DELETE FROM changes WHERE seq <= ?", (cutoff,))
            db.execute("UPDATE meta SET value=? WHERE key=?", (str(cutoff), CHANGE_LOG_FROM))
        return
    db.execute(TABLE)
    for name, body in TRIGGERS.items():
        db.execute(f"CREATE TRIGGER IF NOT EXISTS {name} {body}")
    # (the revision of the moment, so that a view of it can be followed from here)
    db.execute(f"INSERT INTO changes(kind, a, b) SELECT '{REVISION}', value, '' FROM meta WHERE key='content_revision'")
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (CHANGE_LOG_FROM, str(_last(db))))


def _running(db: sqlite3.Connection) -> bool:
    marks = ",".join("?" * len(TRIGGERS))
    found = db.execute(f"SELECT count(*) FROM sqlite_master WHERE type='trigger' AND name IN ({marks})",
                       list(TRIGGERS)).fetchone()[0]
    return int(found) == len(TRIGGERS)


def _last(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT seq FROM sqlite_sequence WHERE name='changes'").fetchone() \
        if db.execute("SELECT 1 FROM sqlite_master WHERE name='sqlite_sequence'").fetchone() else None
    return 0 if row is None else int(row[0])


def position(db: sqlite3.Connection) -> int | None:
    return _last(db) if _running(db) else None


def since(db: sqlite3.Connection, after: int, revision: str | None) -> ChangeSet | None:
    if not _running(db):
        return None
    started = db.execute("SELECT value FROM meta WHERE key=?", (CHANGE_LOG_FROM,)).fetchone()
    if started is None or after < int(started[0]) or after > _last(db):
        return None
    if revision is not None:
        row = db.execute(f"SELECT a FROM changes WHERE kind='{REVISION}' AND seq <= ? ORDER BY seq DESC LIMIT 1",
                         (after,)).fetchone()
        if row is None or row[0] != revision:
            return None
    return change_set(db.execute("SELECT kind, a, b FROM changes WHERE seq > ?", (after,)))
