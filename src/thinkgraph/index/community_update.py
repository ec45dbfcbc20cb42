"""The community layer the last build left, read for an update: which communities exist, each entity's
community at every level, and where the entity graph changed since (index/community_state.py).

The membership comes from the saved state when the store still matches it (the same community nodes,
as many SUMMARY_FOR and CHILD_OF edges); only otherwise are those edges read back (a quarter of a
million at 100k passages, 3 s). A store that does not match (a state from another host, an entity
removed and indexed again, which loses its SUMMARY_FOR edges with its node) is read in full, and the
write then repairs what a kept community lacks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from thinkgraph.graph.leiden import Community, WarmStart
from thinkgraph.index.community_state import MAX_DRIFT, Fingerprints, SavedState, load_state
from thinkgraph.models import EdgeType, Node, NodeType
from thinkgraph.store.base import GraphStore


@dataclass(slots=True)
class Previous:
    nodes: dict[str, Node]  # the community nodes
    edges: set[tuple[str, str, str]] | None  # their SUMMARY_FOR and CHILD_OF edges; None: as the state says
    levels: list[list[int]] | None  # levels[l][entity]: its community at level l then (-1: none)
    saved: SavedState | None


def read_previous(store: GraphStore, ids: Sequence[str]) -> Previous:
    """``ids``: the entities of the graph now, in its order."""
    nodes = {n.id: n for n in store.iter_nodes(NodeType.COMMUNITY)}
    saved = load_state(store)
    if not nodes:
        return Previous(nodes, set(), None, saved)
    counts = store.count_edges()
    if saved is not None and set(saved.communities) == set(nodes) and saved.edge_counts() == (
            counts.get(EdgeType.SUMMARY_FOR, 0), counts.get(EdgeType.CHILD_OF, 0)):
        where = {node_id: i for i, node_id in enumerate(saved.ids)}
        at = np.array([where.get(node_id, -1) for node_id in ids], dtype=np.int64)
        levels = np.where(at >= 0, saved.levels[:, np.maximum(at, 0)], -1)
        return Previous(nodes, None, levels.tolist(), saved)
    edges = {(e.src, e.dst, str(e.type)) for e in store.iter_edges((EdgeType.SUMMARY_FOR, EdgeType.CHILD_OF))}
    level_of = {cid: int(n.props.get("level", 0)) for cid, n in nodes.items()}
    index = {node_id: i for i, node_id in enumerate(ids)}
    rows = [[-1] * len(ids) for _ in range(1 + max(level_of.values()))]
    labels: dict[str, int] = {}
    for src, dst, kind in sorted(edges):
        if kind == EdgeType.SUMMARY_FOR and src in level_of and (i := index.get(dst)) is not None:
            rows[level_of[src]][i] = labels.setdefault(src, len(labels))
    return Previous(nodes, edges, rows, saved)


def warm_start(before: Previous, ids: Sequence[str], current: Fingerprints,
               warm: bool) -> tuple[WarmStart | None, Fingerprints]:
    """The warm start (None: a cold build) and the baseline fingerprints to keep: where the graph
    changed when that is known and small, else every node may move (a new baseline)."""
    if not warm or before.levels is None:
        return None, current
    change = before.saved.change(ids, current) if before.saved is not None else None
    if change is None or change.drift > MAX_DRIFT:
        return WarmStart(before.levels), current
    return WarmStart(before.levels, change.changed), change.baseline


def new_state(ids: Sequence[str], current: Fingerprints, baseline: Fingerprints, found: list[Community],
              community_ids: list[str]) -> SavedState:
    depth = 1 + max((c.level for c in found), default=-1)
    levels = np.full((depth, len(ids)), -1, dtype=np.int32)
    for label, c in enumerate(found):
        levels[c.level, list(c.members)] = label
    return SavedState(list(ids), current, baseline, levels, list(community_ids))
