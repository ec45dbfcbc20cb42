"""Writing a community build into the store as a change to what is there: communities that left are
deleted, new ones added with their member (SUMMARY_FOR) and parent (CHILD_OF) edges, and a community
that continues (index/community_update.py ``place``) gets only the edges it gained or lost; its node is
rewritten (and its vector dropped, to be encoded again) only when its members changed or it has a new
summary. When the store did not match the saved state its edges were read, and every continuing
community's edges are set right against them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from thinkgraph.graph.leiden import Community
from thinkgraph.index.community_state import STATE_META, SavedState, prune, save_state
from thinkgraph.index.community_update import Layout, Placement, Previous
from thinkgraph.models import Edge, EdgeType, Node, NodeType
from thinkgraph.store.base import GraphStore

Link = tuple[str, str, str]  # (src, dst, type) of a SUMMARY_FOR or CHILD_OF edge


@dataclass(frozen=True, slots=True)
class Written:
    nodes: int  # communities added or rewritten
    edges_added: int
    edges_removed: int


def members_changed(found: Sequence[Community], placement: Placement, layout: Layout,
                    before: Previous) -> list[bool]:
    """Per community found: new, or continuing with another member set (the layout holds only
    entities still in the graph: a removed member shows as the size its node recorded)."""
    return [label is None or not np.array_equal(layout.members(c.level, label), np.asarray(c.members))
            or before.nodes[cid].props.get("size") != len(c.members)
            for c, cid, label in zip(found, placement.ids, placement.continues, strict=True)]


def write_communities(store: GraphStore, found: Sequence[Community], placement: Placement, changed: Sequence[bool],
                      before: Previous, layout: Layout, entity_ids: Sequence[str], text_of: Callable[[int], str],
                      summaries: dict[str, str], state: SavedState) -> Written:
    """``changed``: ``members_changed``'s answer per community; ``text_of(i)``: the text of community
    ``found[i]`` when it is written (its summary or the fallback)."""
    ids = placement.ids
    stored = _links_by_community(before.edges) if before.edges is not None else None
    new_nodes: list[Node] = []
    rewritten: list[Node] = []
    add: list[Link] = []
    remove: list[Link] = []
    for i, c in enumerate(found):
        cid, label = ids[i], placement.continues[i]
        parent = ids[c.parent] if c.parent is not None else None
        node = Node(cid, NodeType.COMMUNITY, "", {"level": c.level, "size": len(c.members),
                                                  "summarized": cid in summaries})
        if label is None:
            new_nodes.append(Node(cid, node.type, text_of(i), node.props))
            add += _links(cid, [entity_ids[m] for m in c.members], parent)
            continue
        if changed[i] or cid in summaries:
            rewritten.append(Node(cid, node.type, text_of(i), node.props))
        if stored is not None:
            old = stored.get(cid, set())
        elif changed[i] or layout.parent_id(c.level, label) != parent:
            old = set(_links(cid, [entity_ids[m] for m in layout.members(c.level, label)],
                             layout.parent_id(c.level, label)))
        else:
            continue  # the saved state vouches for its edges, and they are what they should be
        want = set(_links(cid, [entity_ids[m] for m in c.members], parent))
        add += sorted(want - old)
        remove += sorted(old - want)
    token = save_state(store, state)
    with store.transaction():
        # communities that left, and any node that stands under a new community's id without having
        # been continued (its edges and text are not this community's)
        for cid in sorted((set(before.nodes) - set(ids)) | {n.id for n in new_nodes if n.id in before.nodes}):
            store.delete_node(cid)
        for node in rewritten:
            store.update_node(node)
        store.delete_vectors([n.id for n in rewritten])
        store.delete_edges(Edge(a, b, t) for a, b, t in remove)
        store.add_nodes(new_nodes)
        store.add_edges(Edge(a, b, t) for a, b, t in add)
        store.set_meta(STATE_META, token)
    prune(store, token)
    return Written(len(new_nodes) + len(rewritten), len(add), len(remove))


def _links(cid: str, members: Sequence[str], parent: str | None) -> list[Link]:
    links = [(cid, m, str(EdgeType.SUMMARY_FOR)) for m in members]
    return links + ([(cid, parent, str(EdgeType.CHILD_OF))] if parent is not None else [])


def _links_by_community(edges: set[Link]) -> dict[str, set[Link]]:
    out: dict[str, set[Link]] = {}
    for link in edges:
        out.setdefault(link[0], set()).add(link)
    return out
