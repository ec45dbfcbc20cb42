"""Human curation of the graph: edit an entity's name and description, or merge entities into one.
Each change re-embeds what it touched and is written to the index's audit log."""

from __future__ import annotations

import dataclasses

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import InputError, NotFoundError
from thinkgraph.models import Edge, Node, NodeType, Provenance
from thinkgraph.store.base import GraphStore
from thinkgraph.store.common import edge_key


def _entity(store: GraphStore, node_id: str) -> Node:
    node = store.get_node(node_id)
    if node is None or node.type != NodeType.ENTITY:
        raise NotFoundError(f"no entity {node_id!r} in the index")
    return node


def edit_entity(store: GraphStore, embedder: Embedder, node_id: str, *, name: str | None = None,
                description: str | None = None) -> Node:
    node = _entity(store, node_id)
    if name is not None and not name.strip():
        raise InputError("an entity name cannot be empty")
    props = dict(node.props)
    if description is not None:
        props["description"] = description
    updated = Node(node.id, node.type, name.strip() if name else node.text, props)
    with store.transaction():
        store.update_node(updated)
        store.put_vectors([node.id], embedder.embed([updated.text]))
        store.add_audit("entity.edit", {"id": node.id, "before": {"name": node.text,
                                                                  "description": node.props.get("description")},
                                        "after": {"name": updated.text, "description": props.get("description")}})
    return updated


def merge_entities(store: GraphStore, embedder: Embedder, sources: list[str], target: str) -> Node:
    """Move every edge and provenance record of ``sources`` onto ``target``, then delete the sources."""
    kept = _entity(store, target)
    doomed = [_entity(store, s) for s in dict.fromkeys(sources) if s != target]
    if not doomed:
        raise InputError("give at least one entity to merge into the target")
    moved = 0
    with store.transaction():
        for node in doomed:
            store.add_provenance([dataclasses.replace(p, item_id=target) for p in store.provenance(node.id)])
            for edge in store.edges_of(node.id):
                src, dst = (target if edge.src == node.id else edge.src), (target if edge.dst == node.id else edge.dst)
                if src == dst:
                    continue  # an edge between two merged entities would become a self-loop
                new = Edge(src, dst, edge.type, edge.weight, dict(edge.props))
                store.add_edges([new])
                store.add_provenance([Provenance(edge_key(new), p.doc_id, p.chunk_id, p.start, p.end)
                                      for p in store.provenance(edge_key(edge))])
                moved += 1
            store.delete_node(node.id)
        aliases = sorted({*kept.props.get("aliases", []), *(n.text for n in doomed)})
        merged = Node(kept.id, kept.type, kept.text, {**kept.props, "aliases": aliases})
        store.update_node(merged)
        store.put_vectors([kept.id], embedder.embed([merged.text]))
        store.add_audit("entity.merge", {"target": target, "sources": [n.id for n in doomed],
                                         "names": [n.text for n in doomed], "edges_moved": moved})
    return merged
