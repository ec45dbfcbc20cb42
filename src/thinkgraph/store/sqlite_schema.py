"""The SQLite index's tables and indexes, and the upgrade of an index an earlier version made."""

from __future__ import annotations

import sqlite3

# The edges' lookup indexes by either end, with the other end inside them: whether an edge joins two given
# nodes is read from the index alone (two hubs of a million-passage index: 37 ms a pair through the
# table, below one through the index). Created with a new index; an index made before them keeps its
# (src, type) and (dst, type) ones, correct but slower, until an indexing run upgrades it
# (``upgrade_indexes``: a minute at a million passages, once) rather than the first `ask` after an update.
EDGE_LOOKUPS = {"edges_src_dst": "edges(src, type, dst)", "edges_dst_src": "edges(dst, type, src)"}
EDGE_LOOKUPS_BEFORE = ("edges_src", "edges_dst")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
    id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT NOT NULL, content_hash TEXT NOT NULL,
    status TEXT NOT NULL, error TEXT, n_chars INTEGER NOT NULL DEFAULT 0, updated REAL NOT NULL);
CREATE INDEX IF NOT EXISTS documents_hash ON documents(content_hash);
CREATE TABLE IF NOT EXISTS nodes(
    id TEXT PRIMARY KEY, type TEXT NOT NULL, text TEXT NOT NULL, props TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS nodes_type ON nodes(type);
CREATE TABLE IF NOT EXISTS edges(
    id TEXT PRIMARY KEY, src TEXT NOT NULL, dst TEXT NOT NULL, type TEXT NOT NULL,
    weight REAL NOT NULL, props TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS edges_type ON edges(type);
CREATE TABLE IF NOT EXISTS provenance(
    item_id TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL,
    start INTEGER NOT NULL, end INTEGER NOT NULL, UNIQUE(item_id, doc_id, chunk_id, start, end));
CREATE INDEX IF NOT EXISTS provenance_doc ON provenance(doc_id);
CREATE TABLE IF NOT EXISTS vectors(node_id TEXT PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS stages(stage TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY(stage, key));
CREATE TABLE IF NOT EXISTS failures(
    stage TEXT NOT NULL, key TEXT NOT NULL, message TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY(stage, key));
CREATE TABLE IF NOT EXISTS llm_cache(key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS proposals(
    id INTEGER PRIMARY KEY AUTOINCREMENT, question TEXT NOT NULL, subject TEXT NOT NULL,
    predicate TEXT NOT NULL, object TEXT NOT NULL, chunk_id TEXT NOT NULL, doc_id TEXT NOT NULL,
    status TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS audit(id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, action TEXT NOT NULL,
    payload TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS usage(
    step TEXT PRIMARY KEY, calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, seconds REAL NOT NULL);
CREATE TABLE IF NOT EXISTS claims(
    kind TEXT NOT NULL, key TEXT NOT NULL, owner TEXT NOT NULL, expires REAL NOT NULL, PRIMARY KEY(kind, key));
"""


def create_schema(db: sqlite3.Connection, *, new: bool) -> None:
    """The tables and indexes (those added within a schema version are created if missing); the edge
    lookup indexes only in a new index (an existing one gets them from ``upgrade_indexes``)."""
    for statement in SCHEMA.strip().split(";"):
        if statement.strip():
            db.execute(statement)
    if new:
        for name, columns in EDGE_LOOKUPS.items():
            db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {columns}")


def missing_indexes(db: sqlite3.Connection) -> list[str]:
    have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    return [name for name in EDGE_LOOKUPS if name not in have]


def upgrade_indexes(db: sqlite3.Connection, missing: list[str]) -> None:
    """Create ``missing`` lookup indexes and drop those they replace (inside the caller's transaction)."""
    for name in missing:
        db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {EDGE_LOOKUPS[name]}")
    for old in EDGE_LOOKUPS_BEFORE:  # (the new ones serve every query the old ones did)
        db.execute(f"DROP INDEX IF EXISTS {old}")
