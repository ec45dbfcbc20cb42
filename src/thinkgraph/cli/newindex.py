"""An index file that `thinkgraph index` made and left without a document (every input skipped, or an
error before the first document was written) is removed: a run that indexed nothing leaves no empty
index behind to be asked later (asking a missing index says how to build one; an empty one would
answer with nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass
class NewIndex:
    removed: str | None = None  # where the new, empty index was removed from


@contextmanager
def kept_only_when_filled(location: str, *, new: bool) -> Iterator[NewIndex]:
    """Around the run on ``location``; ``new``: the index did not exist before it. Only an SQLite file
    is removed (a PostgreSQL schema is left as it is)."""
    from thinkgraph.store.factory import parse  # here: the store (numpy) is not needed for --help

    made = NewIndex()
    try:
        yield made
    finally:
        target = parse(location)
        if new and isinstance(target, Path) and target.is_file() and _holds_nothing(target):
            for suffix in ("", *SQLITE_SIDE_FILES):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
            made.removed = str(target)


def _holds_nothing(path: Path) -> bool:
    from thinkgraph.store.factory import open_store

    store = open_store(path, create=False)
    try:
        return not store.list_documents() and not any(store.count_nodes().values())
    finally:
        store.close()
