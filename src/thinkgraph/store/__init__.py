"""Storage of the graph index behind one interface (embedded SQLite by default)."""

from thinkgraph.store.base import GraphStore, RemovalReport
from thinkgraph.store.sqlite import SCHEMA_VERSION, SQLiteStore, open_store

__all__ = ["SCHEMA_VERSION", "GraphStore", "RemovalReport", "SQLiteStore", "open_store"]
