"""Community ids across updates (index/community_update.py ``place``, index/community_write.py): a
community found again keeps its id and gets only the edges it gained or lost; its node (text, size,
vector) is rewritten and its summary redone only when its members changed; a rebuild gives the ids a
build from scratch gives."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support import HashEmbedder
from thinkgraph.ids import community_id
from thinkgraph.index.communities import build_communities
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
