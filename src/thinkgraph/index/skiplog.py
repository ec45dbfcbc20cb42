"""The files the index's runs skipped, kept in the index (`thinkgraph documents --skipped` lists them).

A run replaces what earlier runs recorded under the paths it was given (a file read this time, after
the extra it needed was installed, leaves the list) and keeps the rest (another folder's skips)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from thinkgraph.index.loaders import Skipped
from thinkgraph.store.base import GraphStore

SKIPPED_META = "skipped_files"


def skipped_files(store: GraphStore) -> list[Skipped]:
    try:
        raw = json.loads(store.get_meta(SKIPPED_META) or "[]")
    except ValueError:
        return []
    return [Skipped(str(r["source"]), str(r["reason"]), str(r.get("kind") or "")) for r in raw
            if isinstance(r, dict) and "source" in r and "reason" in r]


def _under(source: str, roots: Sequence[Path]) -> bool:
    path = Path(source.rsplit(":", 1)[0] if not Path(source).exists() else source)  # (a JSONL record: FILE:LINE)
    return any(path == root or root in path.parents for root in roots)


def record_skipped(store: GraphStore, paths: Sequence[str | Path], skipped: Iterable[Skipped]) -> None:
    """This run's skipped files in place of those recorded before under ``paths``."""
    roots = [Path(p) for p in paths]
    kept = [s for s in skipped_files(store) if not _under(s.source, roots)]
    rows = [{"source": s.source, "reason": s.reason, "kind": s.kind} for s in [*kept, *skipped]]
    if rows or store.get_meta(SKIPPED_META):
        store.set_meta(SKIPPED_META, json.dumps(rows, ensure_ascii=False))
