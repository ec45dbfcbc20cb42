"""Entity edit and merge: edges and provenance move, sources disappear, vectors follow, audit records."""

from __future__ import annotations

import pytest

from thinkgraph.errors import InputError
from thinkgraph.models import NodeType


def test_merge_moves_edges_and_provenance_then_deletes_sources(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge()
    entities = sorted(tg.store.iter_nodes(NodeType.ENTITY), key=lambda n: -len(tg.store.edges_of(n.id)))
    target, source = entities[0], entities[1]
    source_edges = [e for e in tg.store.edges_of(source.id) if target.id not in (e.src, e.dst)]
    before = len(tg.store.provenance(target.id))
    merged = tg.merge_entities([source.id], target.id)
    assert tg.store.get_node(source.id) is None and source.text in merged.props["aliases"]
    after = {(e.src, e.dst, e.type) for e in tg.store.edges_of(target.id)}
    for e in source_edges:
        moved = (target.id if e.src == source.id else e.src, target.id if e.dst == source.id else e.dst, e.type)
        assert moved in after
    assert len(tg.store.provenance(target.id)) > before
    assert source.id not in tg.store.get_vectors([NodeType.ENTITY])[0]
    (entry,) = [a for a in tg.store.list_audit() if a["action"] == "entity.merge"]
    assert entry["payload"]["sources"] == [source.id] and entry["payload"]["edges_moved"] >= len(source_edges)
    with pytest.raises(InputError, match="at least one entity"):
        tg.merge_entities([target.id], target.id)


def test_edit_renames_reembeds_and_validates(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge()
    node = next(tg.store.iter_nodes(NodeType.ENTITY))
    ids, vectors = tg.store.get_vectors([NodeType.ENTITY])
    old = vectors[ids.index(node.id)].copy()
    tg.edit_entity(node.id, name="Completely New Name", description="d")
    ids, vectors = tg.store.get_vectors([NodeType.ENTITY])
    assert tg.store.get_node(node.id).text == "Completely New Name" and not (vectors[ids.index(node.id)] == old).all()
    with pytest.raises(InputError, match="cannot be empty"):
        tg.edit_entity(node.id, name="  ")
    with pytest.raises(InputError, match="no entity"):
        tg.edit_entity("nope", name="x")
