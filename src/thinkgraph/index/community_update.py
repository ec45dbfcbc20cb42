"""The community layer the last build left, read for an update: which communities exist, each entity's
community at every level, and where the entity graph changed since (index/community_state.py).

A community found again keeps its id (``place``): the previous community at its level of which it holds
most members, and which holds most of its members, so that a change rewrites the memberships it moved
and the communities whose members changed, not every ancestor of a changed entity under a new id.

The membership comes from the saved state when the store still matches it (the same community nodes,
as many SUMMARY_FOR and CHILD_OF edges); only otherwise are those edges read back (a quarter of a
million at 100k passages, 3 s). A store that does not match (a state from another host, an entity
removed and indexed again, which loses its SUMMARY_FOR edges with its node) is read in full, and the
write then repairs what a kept community lacks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from thinkgraph.graph.leiden import Community, WarmStart
from thinkgraph.ids import community_id
from thinkgraph.index.community_state import MAX_DRIFT, Fingerprints, SavedState, load_state
from thinkgraph.models import EdgeType, Node, NodeType
from thinkgraph.store.base import GraphStore


@dataclass(slots=True)
class Previous:
    nodes: dict[str, Node]  # the community nodes
    edges: set[tuple[str, str, str]] | None  # their SUMMARY_FOR and CHILD_OF edges; None: as the state says
    levels: list[list[int]] | None  # levels[l][entity]: its community at level l then (-1: none)
    saved: SavedState | None
    label_ids: list[str] = field(default_factory=list)  # the community id of each label in levels


def read_previous(store: GraphStore, ids: Sequence[str]) -> Previous:
    """``ids``: the entities of the graph now, in its order."""
    nodes = {n.id: n for n in store.iter_nodes(NodeType.COMMUNITY)}
    saved = load_state(store)
    if not nodes:
        return Previous(nodes, set(), None, saved)
    counts = store.count_edges()
    present = np.zeros(len(saved.ids) if saved is not None else 0, dtype=bool)
    if saved is not None:
        where = {node_id: i for i, node_id in enumerate(saved.ids)}
        at = np.array([where.get(node_id, -1) for node_id in ids], dtype=np.int64)
        present[at[at >= 0]] = True
    # entities removed since took their member edges with them: the state still vouches for the rest
    if saved is not None and set(saved.communities) == set(nodes) and saved.edge_counts(present) == (
            counts.get(EdgeType.SUMMARY_FOR, 0), counts.get(EdgeType.CHILD_OF, 0)):
        levels = np.where(at >= 0, saved.levels[:, np.maximum(at, 0)], -1)
        return Previous(nodes, None, levels.tolist(), saved, list(saved.communities))
    edges = {(e.src, e.dst, str(e.type)) for e in store.iter_edges((EdgeType.SUMMARY_FOR, EdgeType.CHILD_OF))}
    level_of = {cid: int(n.props.get("level", 0)) for cid, n in nodes.items()}
    index = {node_id: i for i, node_id in enumerate(ids)}
    rows = [[-1] * len(ids) for _ in range(1 + max(level_of.values()))]
    labels: dict[str, int] = {}
    for src, dst, kind in sorted(edges):
        if kind == EdgeType.SUMMARY_FOR and src in level_of and (i := index.get(dst)) is not None:
            rows[level_of[src]][i] = labels.setdefault(src, len(labels))
    return Previous(nodes, edges, rows, saved, list(labels))


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


class Layout:
    """The previous communities over the current entity rows: each one's members and parent."""

    def __init__(self, before: Previous) -> None:
        self.ids = before.label_ids
        self.levels = [np.asarray(level, dtype=np.int64) for level in before.levels or []]
        self._sorted = [(np.argsort(level, kind="stable"), np.sort(level, kind="stable")) for level in self.levels]

    def members(self, level: int, label: int) -> npt.NDArray[np.int64]:
        """Ascending entity rows (the order ``Community.members`` has)."""
        order, labels = self._sorted[level]
        low, high = np.searchsorted(labels, [label, label + 1])
        return order[low:high]

    def parent_id(self, level: int, label: int) -> str | None:
        members = self.members(level, label)
        if level == 0 or not len(members):
            return None
        parent = int(self.levels[level - 1][members[0]])
        return self.ids[parent] if parent >= 0 else None

    def continued(self, level: int, members: npt.NDArray[np.int64]) -> int | None:
        """The previous community (label) at ``level`` holding more than half of ``members`` and more
        than half of whose members are among them, if any: at most one new community continues it."""
        if level >= len(self.levels):
            return None
        labels = self.levels[level][members]
        labels = labels[labels >= 0]
        if not len(labels):
            return None
        values, counts = np.unique(labels, return_counts=True)
        best = int(np.argmax(counts))
        label, held = int(values[best]), int(counts[best])
        return label if 2 * held > len(members) and 2 * held > len(self.members(level, label)) else None


@dataclass(frozen=True, slots=True)
class Placement:
    ids: list[str]  # per community found, its id
    continues: list[int | None]  # per community found, the previous community's label it continues


def place(found: Sequence[Community], before: Previous, layout: Layout, entity_ids: Sequence[str], *,
          keep_ids: bool = True) -> Placement:
    """Ids for the communities found. With ``keep_ids`` a continued community keeps its id; any other
    gets the id of its level and members (what a build from scratch gives), which continues the
    community of that id if there was one (a rebuild keeps what it finds unchanged)."""
    label_of = {cid: label for label, cid in enumerate(layout.ids)}
    used: set[str] = set()
    ids: list[str] = []
    continues: list[int | None] = []
    for c in found:
        label = layout.continued(c.level, np.asarray(c.members, dtype=np.int64)) if keep_ids else None
        if label is not None and layout.ids[label] in before.nodes and layout.ids[label] not in used:
            cid = layout.ids[label]
        else:
            names = [entity_ids[m] for m in c.members]
            cid, salt = community_id(c.level, names), 0
            while cid in used:  # (only when a continued community already holds this one's own id)
                salt += 1
                cid = community_id(c.level, [*names, f"#{salt}"])
            label = label_of.get(cid) if cid in before.nodes else None
        used.add(cid)
        ids.append(cid)
        continues.append(label)
    return Placement(ids, continues)
