"""Copying a whole index between stores (SQLite and PostgreSQL, either way): every section row for
row, vectors and the LLM cache included, in one transaction on the target, so nothing is embedded
or asked again and a failed copy leaves the target as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from thinkgraph.errors import InputError
from thinkgraph.store.base import SECTIONS, GraphStore
from thinkgraph.store.common import CONTENT_REVISION
from thinkgraph.store.sqlite import SQLiteStore

Progress = Callable[[str, int], None]  # (section, rows copied)


def copy_index(source: GraphStore, target: GraphStore, progress: Progress | None = None) -> dict[str, int]:
    """Copy ``source`` into the empty index ``target``; returns the rows copied per section."""
    held = sum(target.count_nodes().values()) + len(target.list_documents())
    if held:
        raise InputError(f"{target.describe()} already holds an index; copy into a new file or schema")
    counts: dict[str, int] = {}
    with target.transaction():
        for part in SECTIONS:
            counts[part.name] = target.load(part.name, source.dump(part.name))
            if progress:
                progress(part.name, counts[part.name])
        if revision := source.content_revision():  # the same content: derived files keyed by it still hold
            target.set_meta(CONTENT_REVISION, revision)
    return counts


def copy_to_file(source: GraphStore, path: Path) -> None:
    """A consistent SQLite copy of ``source`` at ``path`` (SQLite's online backup when it is one)."""
    if isinstance(source, SQLiteStore):
        source.backup(path)
        return
    target = SQLiteStore(path)
    try:
        copy_index(source, target)
    finally:
        target.close()
