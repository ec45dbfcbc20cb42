"""Storage of the graph index behind one interface: embedded SQLite (a file) or PostgreSQL (a URL)."""

from thinkgraph.store.base import GraphStore, RemovalReport
from thinkgraph.store.common import SCHEMA_VERSION
from thinkgraph.store.factory import open_store
from thinkgraph.store.sqlite import SQLiteStore

__all__ = ["SCHEMA_VERSION", "GraphStore", "RemovalReport", "SQLiteStore", "open_store"]
