"""The change log's rows as both backends keep them: (kind, a, b), read back as a ``ChangeSet``."""

from __future__ import annotations

from collections.abc import Iterable

from thinkgraph.store.base import ChangeSet

CHANGE_LOG_FROM = "change_log_from"  # meta: the position at which this index's log was started
NODE, EDGE, VECTOR = "node", "edge", "vector"
REVISION = "revision"  # a content revision set (its token in a): marks which revision a position belongs to


def change_set(rows: Iterable[tuple[str, str, str]]) -> ChangeSet:
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    vectors: set[str] = set()
    for kind, a, b in rows:
        if kind == NODE:
            nodes.add(a)
        elif kind == EDGE:
            edges.add((a, b))
        elif kind == VECTOR:
            vectors.add(a)
    return ChangeSet(frozenset(nodes), frozenset(edges), frozenset(vectors))
