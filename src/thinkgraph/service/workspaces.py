"""Workspaces: one index each, in its own folder under the service root. Names are checked so that
no request can reach a path outside the root."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings, load_settings
from thinkgraph.errors import InputError, ThinkgraphError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
INDEX_FILE = "index.db"


class UnknownWorkspaceError(ThinkgraphError):
    pass


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise InputError(f"workspace name {name!r} must be 1-64 letters, digits, '-' or '_'")
    return name


class Workspaces:
    def __init__(self, root: Path, config_path: Path | None = None) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.config_path = config_path
        self._open: dict[str, ThinkGraph] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def settings(self) -> Settings:
        return load_settings(self.config_path)

    def secrets(self) -> list[str]:
        """The API keys the workspaces' models use (redacted from every response)."""
        settings = self.settings()
        return [key.get_secret_value() for key in (settings.llm.api_key, settings.embedding.api_key) if key]

    def path(self, name: str) -> Path:
        folder = (self.root / check_name(name)).resolve()
        if folder.parent != self.root:  # defence in depth; the name check already rules this out
            raise InputError(f"workspace {name!r} is outside the service root")
        return folder / INDEX_FILE

    def names(self) -> list[str]:
        return sorted(p.parent.name for p in self.root.glob(f"*/{INDEX_FILE}"))

    def get(self, name: str, *, create: bool = False) -> ThinkGraph:
        tg = self._open.get(name)
        if tg is not None:
            return tg
        path = self.path(name)
        if not path.exists() and not create:
            raise UnknownWorkspaceError(f"no workspace {name!r}; create it with POST /v1/workspaces/{name}")
        path.parent.mkdir(exist_ok=True)
        tg = self._open[name] = ThinkGraph(path, settings=self.settings(), create=True)
        return tg

    def lock(self, name: str) -> asyncio.Lock:
        return self._locks.setdefault(name, asyncio.Lock())

    def close(self) -> None:
        for tg in self._open.values():
            tg.close()
        self._open.clear()
