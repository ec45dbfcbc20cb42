"""On-disk copies of what the retrieval view derives from an index, one folder per content revision.

A new process (every `thinkgraph ask`) would otherwise decode every vector and edge of the index from
the store and rebuild its BM25 indexes and entity dictionary before answering one question: seconds
on MuSiQue, against milliseconds for the question itself. The derived parts are kept under the user
cache folder (``cachedir.cache_root("views")``), keyed by the store's content revision (a random token
that every change to nodes, edges or vectors replaces), so a changed index never meets an old copy.

Only numpy arrays (memory-mapped, loaded without pickle) and JSON are written: a cache file cannot
run code. Every item is written to a temporary folder and renamed into place, so readers see whole
items or none; any failure to read or write is logged and the item is built from the store instead.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from thinkgraph.npyfiles import load_npy
from thinkgraph.store.base import GraphStore

log = logging.getLogger(__name__)

VIEW_CACHE_FORMAT = 5  # raised whenever what an item holds or how it is laid out changes
KEEP_REVISIONS = 8  # folders kept in the cache root (least recently used ones go first)

T = TypeVar("T")


# What reading a damaged item raises: a truncated or foreign file (OSError, ValueError), an empty one
# (numpy: EOFError), a header or manifest without the fields we wrote (KeyError, TypeError).
UNREADABLE = (OSError, ValueError, EOFError, KeyError, TypeError)
ORIGIN = "origin.json"  # which index a revision folder belongs to (the cache root holds every index's)

class ViewCache:
    """The cached items of one content revision of one index."""

    def __init__(self, store: GraphStore, revision: str, folder: Path, position: int | None = None) -> None:
        self.store = store
        self.revision = revision
        self.folder = folder
        self.position = position  # the index's change-log position at this revision (None: no log)

    @classmethod
    def for_store(cls, store: GraphStore, root: Path) -> ViewCache | None:
        """None for an index without a content revision (written before revisions were kept and
        opened read-only since)."""
        before = store.change_position()
        revision = store.content_revision()
        if not revision:
            return None
        # (a change between the reads would pair this revision with another's position: none then)
        position = before if before is not None and store.change_position() == before else None
        cache = cls(store, revision, root / f"v{VIEW_CACHE_FORMAT}-{revision}", position)
        if cache.folder.is_dir():
            with contextlib.suppress(OSError):  # recently used: kept when older revisions are pruned
                os.utime(cache.folder)
        return cache

    def get(self, name: str, read: Callable[[Path], T], build: Callable[[], T],
            write: Callable[[T, Path], None]) -> T:
        """The item ``name`` read from the cache, or built and then kept. Kept only when the index did
        not change from this revision before or while it was built (the store may have moved on since
        this view was opened, e.g. another process indexed: that build belongs to no cached revision)."""
        item = self.folder / name
        if item.is_dir():
            try:
                return read(item)
            except UNREADABLE as exc:
                log.warning("view cache item %s unreadable (%s); rebuilding it from the index", item, exc)
        current = self.store.content_revision() == self.revision
        value = build()
        if current and self.store.content_revision() == self.revision:
            self._keep(name, value, write)
        return value

    def earlier_folders(self) -> list[Path]:
        """The folders of this index's other revisions, the most recently used first."""
        found: list[tuple[float, Path]] = []
        for folder in self.folder.parent.glob(f"v{VIEW_CACHE_FORMAT}-*"):
            if folder == self.folder:
                continue
            with contextlib.suppress(*UNREADABLE):
                if json.loads((folder / ORIGIN).read_text(encoding="utf-8"))["index"] == self._origin():
                    found.append((folder.stat().st_mtime, folder))
        return [folder for _, folder in sorted(found, reverse=True)]

    def _origin(self) -> str:
        return str(Path(self.store.path).resolve())

    @staticmethod
    def revision_of(folder: Path) -> str:
        """The content revision a revision folder was made for (its name holds it)."""
        return folder.name.split("-", 1)[1]

    def position_of(self, folder: Path) -> int | None:
        """The change-log position that revision ``folder`` was built at (None: unknown)."""
        try:
            position = json.loads((folder / ORIGIN).read_text(encoding="utf-8")).get("position")
        except (*UNREADABLE, AttributeError):
            return None
        return position if isinstance(position, int) else None

    def _write_origin(self) -> None:
        """Which index this revision belongs to, and its log position; written by the first to keep an
        item here (again by one that knows the position its writer did not)."""
        kept = (self.folder / ORIGIN).is_file()
        if kept and (self.position is None or self.position_of(self.folder) is not None):
            return
        origin = self.folder / f".{ORIGIN}.{uuid.uuid4().hex}.tmp"
        origin.write_text(json.dumps({"index": self._origin(), "position": self.position}), encoding="utf-8")
        os.replace(origin, self.folder / ORIGIN)

    def read(self, name: str, read: Callable[[Path], T]) -> T | None:
        """The item ``name`` when it is kept and readable, else None."""
        item = self.folder / name
        if not item.is_dir():
            return None
        try:
            return read(item)
        except UNREADABLE:
            return None

    def _keep(self, name: str, value: T, write: Callable[[T, Path], None]) -> None:
        fresh = not self.folder.exists()
        staging = self.folder / f".{name}.{uuid.uuid4().hex}.tmp"
        try:
            staging.mkdir(parents=True)
            write(value, staging)
            os.rename(staging, self.folder / name)
            self._write_origin()
        except OSError as exc:  # unwritable cache, full disk, or another process kept it first
            shutil.rmtree(staging, ignore_errors=True)
            if not (self.folder / name).is_dir():
                log.warning("view cache item %s not kept: %s", self.folder / name, exc)
            return
        if fresh:
            prune(self.folder.parent, keep=KEEP_REVISIONS)


def prune(root: Path, keep: int) -> None:
    """Remove all but the ``keep`` most recently used revision folders under ``root``."""
    try:
        folders = [p for p in root.iterdir() if p.is_dir() and p.name.startswith("v")]
        folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)  # a reader still mapping its files keeps them until it ends


# item layouts: numpy arrays and JSON, nothing else --------------------------------------------
def write_arrays(folder: Path, **arrays: np.ndarray) -> None:
    for key, array in arrays.items():
        np.save(folder / f"{key}.npy", np.ascontiguousarray(array), allow_pickle=False)


def read_array(folder: Path, key: str) -> np.ndarray:
    return load_npy(folder / f"{key}.npy", mmap_mode="r")  # (one header at a time: npyfiles.py)


def write_json(folder: Path, key: str, value: Any) -> None:
    (folder / f"{key}.json").write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")


def read_json(folder: Path, key: str) -> Any:
    return json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
