"""Community ids across updates (index/community_update.py ``place``, index/community_write.py): a
community found again keeps its id and gets only the edges it gained or lost; its node (text, size,
vector) is rewritten and its summary redone only when its members changed; a rebuild gives the ids a
build from scratch gives."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support import HashEmbedder
from thinkgraph.ids import community_id
from thinkgraph.index.communities import ENTITY_GRAPH_EDGES, _entity_graph, build_communities
from thinkgraph.llm.service import LLM
from thinkgraph.models import Edge, Node
from thinkgraph.store.sqlite import SQLiteStore
from thinkgraph.testing import ScriptedBackend


def _clique(store: SQLiteStore, names: list[str]) -> None:
    store.add_nodes([Node(f"ent:{n}", "entity", n.title()) for n in names])
    store.add_edges([Edge(f"ent:{a}", f"ent:{b}", "CO_OCCURS", 1.0)
                     for i, a in enumerate(names) for b in names[i + 1:]])


def _members(store: SQLiteStore) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for e in store.iter_edges(["SUMMARY_FOR"]):
        out.setdefault(e.src, set()).add(e.dst)
    return out


def _vectors(store: SQLiteStore) -> dict[str, list[float]]:
    ids, vectors = store.get_vectors(["community"])
    return dict(zip(ids, vectors.tolist(), strict=True))


def _build(store: SQLiteStore, llm: LLM, warm: bool = True) -> int:
    report = asyncio.run(build_communities(store, max_cluster_size=50, seed=7, llm=llm, warm=warm))
    nodes = [n for n in store.iter_nodes("community") if n.id not in _vectors(store)]
    store.put_vectors([n.id for n in nodes], HashEmbedder().embed([n.text for n in nodes]))
    return report.written


def test_a_grown_community_keeps_its_id_and_only_it_is_rewritten(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    harbour, moor = ["anchor", "buoy", "crane", "dock", "eel"], ["fern", "gorse", "heath", "ivy", "juniper"]
    _clique(store, harbour)
    _clique(store, moor)
    store.add_edges([Edge("ent:eel", "ent:fern", "CO_OCCURS", 0.1)])
    backend = ScriptedBackend(rules=[("Summary:", "A group.")])
    llm = LLM(backend)
    assert _build(store, llm) == 2 and len(backend.requests) == 2
    first = _members(store)
    (grown,) = [cid for cid, m in first.items() if "ent:anchor" in m]
    (kept,) = set(first) - {grown}
    kept_text, kept_vector = store.get_node(kept), _vectors(store)[kept]

    _clique(store, ["anchor", "kelp"])  # kelp joins the harbour
    assert _build(store, llm) == 1
    after = _members(store)
    assert set(after) == set(first) and after[grown] == first[grown] | {"ent:kelp"} and after[kept] == first[kept]
    assert len(backend.requests) == 3 and "Kelp" in backend.requests[-1].messages[-1]["content"]
    assert store.get_node(grown).props["size"] == 6 and store.get_node(kept) == kept_text
    assert _vectors(store)[kept] == kept_vector
    assert _vectors(store)[grown] == HashEmbedder().embed([store.get_node(grown).text])[0].tolist()  # encoded again

    assert _build(store, llm, warm=False) == 1  # a rebuild: the ids of a build from scratch
    for cid, members in _members(store).items():
        assert cid == community_id(store.get_node(cid).props["level"], sorted(members))
    assert kept in _members(store) and len(backend.requests) == 4  # same members, same id: summary kept


def test_a_community_that_splits_keeps_its_id_on_one_side_only(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    left, right = ["ash", "birch", "cedar", "dogwood"], ["elm", "fir", "gum", "hazel"]
    _clique(store, left)
    _clique(store, right)
    store.add_edges([Edge(f"ent:{a}", f"ent:{b}", "CO_OCCURS", 1.0) for a in left for b in right])  # one group
    llm = LLM(ScriptedBackend(rules=[("Summary:", "A group.")]))
    _build(store, llm)
    (whole,) = _members(store)
    store.delete_edges([Edge(f"ent:{a}", f"ent:{b}", "CO_OCCURS", 1.0) for a in left for b in right])
    store.add_edges([Edge("ent:dogwood", "ent:elm", "CO_OCCURS", 0.1)])
    _build(store, llm)
    after = _members(store)
    assert len(after) == 2 and sorted(len(m) for m in after.values()) == [4, 4]
    assert whole not in after  # neither half holds more than half of the whole: both are new
    assert len(set(after)) == 2 and all(store.get_node(cid).props["size"] == 4 for cid in after)


def test_the_entity_graph_matches_edge_ends_to_entities_by_id(tmp_path: Path) -> None:
    """Edges of the community graph's types between two entities, by their positions in id order;
    edges to other nodes, to missing nodes, self-loops and other types are left out (reference: the
    edges walked one by one)."""
    store = SQLiteStore(tmp_path / "g.db")
    names = [f"ent:{k:03d}" for k in (7, 3, 11, 0, 5, 9)]
    store.add_nodes([Node(n, "entity", n) for n in names] + [Node("chunk:1", "chunk", "text")])
    edges = [Edge("ent:007", "ent:003", "CO_OCCURS", weight=2.0), Edge("ent:000", "ent:011", "OPENREL"),
             Edge("ent:005", "ent:005", "CO_OCCURS"), Edge("ent:009", "chunk:1", "CO_OCCURS"),
             Edge("ent:003", "ent:404", "SYNONYM"), Edge("ent:009", "ent:000", "SYNONYM", weight=0.5),
             Edge("chunk:1", "ent:003", "CONTAINS")]
    store.add_edges(edges)
    graph = _entity_graph(store)
    position = {n: i for i, n in enumerate(sorted(names))}
    expected = sorted((position[e.src], position[e.dst], e.weight) for e in edges
                      if e.type in ENTITY_GRAPH_EDGES and e.src in position and e.dst in position and e.src != e.dst)
    assert [n.id for n in graph.nodes] == sorted(names)
    assert sorted((a, b, w) for (a, b), w in zip(graph.edges, graph.weights, strict=True)) == expected
