"""A PostgreSQL server with pgvector for the tests: the one THINKGRAPH_TEST_POSTGRES_URL names, or an
embedded one from the `pgserver` package (PostgreSQL 16 with pgvector, started once per session
with its data in a temporary folder, deleted at the end). Each test gets a schema of its own, dropped
afterwards."""

from __future__ import annotations

import os
import secrets
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

URL_ENV = "THINKGRAPH_TEST_POSTGRES_URL"


def start_server() -> tuple[str, object | None]:
    """The server's URL (no schema) and the embedded server handle, if one was started."""
    if os.environ.get(URL_ENV):
        return os.environ[URL_ENV], None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        try:
            import pgserver
        except ImportError:
            if os.environ.get("CI"):
                raise
            pytest.skip("PostgreSQL tests need `pgserver` (in the dev extra) or THINKGRAPH_TEST_POSTGRES_URL")
        # not under pytest's temporary folder: run as root, pgserver starts PostgreSQL as its own user,
        # which may not enter pytest's private (0700) folders
        data = Path(tempfile.mkdtemp(prefix="thinkgraph-pg-")) / "data"
        server = pgserver.get_server(data, cleanup_mode="delete")
    return server.get_uri(), server


def stop_server(server: object | None) -> None:
    """Stop an embedded server and delete its data (and the temporary folder holding it)."""
    if server is not None:
        server.cleanup()
        server.pgdata.parent.rmdir()


def with_schema(url: str, schema: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


def drop_schema(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    from thinkgraph.store.pg_location import parse_location

    target = parse_location(url)
    with psycopg.connect(target.conninfo, password=target.password, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def schema_urls(server_url: str) -> Iterator:
    """A factory of URLs of fresh schemas; every schema it named is dropped at the end."""
    made: list[str] = []

    def fresh(prefix: str = "t") -> str:
        made.append(f"{prefix}_{secrets.token_hex(5)}")
        return with_schema(server_url, made[-1])

    yield fresh
    for schema in made:
        drop_schema(server_url, schema)
