"""Workspaces: one index each, in its own folder under the service root, or in its own schema of a
PostgreSQL database (``serve --store postgresql://...``). Names are checked so that no request can
reach a path outside the root or a schema that is not a workspace's."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings, load_settings
from thinkgraph.errors import InputError, ThinkgraphError
from thinkgraph.store.factory import database_location, index_exists, list_indexes

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
INDEX_FILE = "index.db"
SCHEMA_PREFIX = "ws_"  # a workspace's schema: the prefix keeps other schemas of the database out of reach
MAX_SCHEMA_NAME = 63  # PostgreSQL's identifier length


class UnknownWorkspaceError(ThinkgraphError):
    pass


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise InputError(f"workspace name {name!r} must be 1-64 letters, digits, '-' or '_'")
    return name


class Workspaces:
    def __init__(self, root: Path, config_path: Path | None = None, store: str | None = None) -> None:
        self.root = root.resolve()
        self.database = database_location(store) if store else None  # one schema per workspace there
        if self.database is None:
            self.root.mkdir(parents=True, exist_ok=True)
        self.config_path = config_path
        self._open: dict[str, ThinkGraph] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def settings(self) -> Settings:
        return load_settings(self.config_path)

    def secrets(self) -> list[str]:
        """The API keys the workspaces' models use and the database password (redacted from every response)."""
        settings = self.settings()
        keys = [key.get_secret_value() for key in (settings.llm.api_key, settings.embedding.api_key) if key]
        return keys + ([self.database.password] if self.database is not None and self.database.password else [])

    def path(self, name: str) -> Path:
        folder = (self.root / check_name(name)).resolve()
        if folder.parent != self.root:  # defence in depth; the name check already rules this out
            raise InputError(f"workspace {name!r} is outside the service root")
        return folder / INDEX_FILE

    def location(self, name: str) -> str:
        """Where a workspace's index is: a file under the root, or a schema of the database."""
        if self.database is None:
            return str(self.path(name))
        schema = SCHEMA_PREFIX + check_name(name)
        if len(schema) > MAX_SCHEMA_NAME:
            raise InputError(f"workspace name {name!r} is too long for PostgreSQL "
                             f"(at most {MAX_SCHEMA_NAME - len(SCHEMA_PREFIX)} characters)")
        return self.database.with_schema(schema).url

    def names(self) -> list[str]:
        if self.database is not None:
            return sorted(s.removeprefix(SCHEMA_PREFIX) for s in list_indexes(self.database)
                          if s.startswith(SCHEMA_PREFIX))
        return sorted(p.parent.name for p in self.root.glob(f"*/{INDEX_FILE}"))

    def get(self, name: str, *, create: bool = False) -> ThinkGraph:
        tg = self._open.get(name)
        if tg is not None:
            return tg
        location = self.location(name)
        if not create and not index_exists(location):
            raise UnknownWorkspaceError(f"no workspace {name!r}; create it with POST /v1/workspaces/{name}")
        if self.database is None:
            self.path(name).parent.mkdir(exist_ok=True)
        tg = self._open[name] = ThinkGraph(location, settings=self.settings(), create=True)
        return tg

    def lock(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())

    def close(self) -> None:
        for tg in self._open.values():
            tg.close()
        self._open.clear()
