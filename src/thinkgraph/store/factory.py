"""Opening an index by where it is: a file path (SQLite) or a ``postgresql://`` URL (PostgreSQL).
The backend is chosen by the parsed URL scheme, never by what the string contains."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from thinkgraph.errors import ConfigError
from thinkgraph.store.base import GraphStore
from thinkgraph.store.pg_location import SCHEMES, PgLocation, parse_location
from thinkgraph.store.sqlite import SQLiteStore

POSTGRES_EXTRA = "PostgreSQL indexes need psycopg and pgvector: pip install 'thinkgraph[postgres]'"


def parse(location: str | Path) -> Path | PgLocation:
    """A local SQLite file, or a PostgreSQL location."""
    if isinstance(location, Path):
        return location
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if scheme in SCHEMES:
        return parse_location(location)
    if scheme == "sqlite":  # sqlite:///abs/path.db or sqlite:relative.db
        return Path(unquote(parts.path))
    if scheme and parts.netloc:
        raise ConfigError(f"unsupported index URL scheme {parts.scheme!r}: give a file path or postgresql://...")
    return Path(location)  # a plain path (a Windows drive letter parses as a one-letter scheme)


def database_location(url: str) -> PgLocation:
    """A ``postgresql://`` URL parsed (a service keeps one index per schema of that database)."""
    return parse_location(url)


def open_store(location: str | Path, *, create: bool = True) -> GraphStore:
    target = parse(location)
    if isinstance(target, Path):
        return SQLiteStore(target, create=create)
    store: GraphStore = _postgres()(target, create=create)
    return store


def shown_location(location: str | Path) -> str:
    """Where an index is, fit to print or write down (a URL's password masked)."""
    target = parse(location)
    return str(target) if isinstance(target, Path) else target.display


def index_exists(location: str | Path) -> bool:
    target = parse(location)
    if isinstance(target, Path):
        return target.is_file()
    return target.schema in list_indexes(target)


def list_indexes(target: PgLocation) -> list[str]:
    """The schemas of the database that hold a thinkgraph index."""
    from thinkgraph.store.pg_schema import index_schemas

    return index_schemas(target)


def _postgres() -> type:
    try:
        from thinkgraph.store.postgres import PostgresStore
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in ("psycopg", "pgvector"):
            raise
        raise ConfigError(POSTGRES_EXTRA) from exc
    return PostgresStore
