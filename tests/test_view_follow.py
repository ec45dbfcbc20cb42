"""A changed index's view follows its change log (retrieval/view_follow.py): the vectors, the
entity-passage and entity graphs and the passage-entity incidence carried from the last revision by
what was touched equal those built whole from the index, through additions, removals, edits, edges
written between nodes already indexed, and edges older than the node they name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.graph.matrix import GraphMatrix
from thinkgraph.models import Edge, Node, NodeType, SourceDocument
from thinkgraph.retrieval.views import IndexView

NAMES = ["Mara Lind", "Oskar Vik", "Ilse Brandt", "Skarn", "Northmere", "Vale Harbour", "Kestrel Bay", "Arne Holt"]
DOCS = [SourceDocument(id=f"d{i}", title=f"Note {i}", source="t",
                       text=f"{NAMES[i % 8]} met {NAMES[(i * 3 + 1) % 8]} at {NAMES[(i + 5) % 8]} in {1840 + i}. "
                            f"Later {NAMES[(i + 2) % 8]} trained {NAMES[(i * 5 + 3) % 8]}.")
        for i in range(30)]


def _graph(g: GraphMatrix) -> dict[tuple[str, str], float]:
    coo = g.adjacency.tocoo()
    return {(g.ids[int(r)], g.ids[int(c)]): round(float(v), 9) for r, c, v in zip(coo.row, coo.col, coo.data,
                                                                                     strict=True) if v}


def _items(view: IndexView) -> dict[str, object]:
    chunks, graph = view.vectors(NodeType.CHUNK), view.entity_passage_graph
    incidence = view.incidence
    pairs = {(chunks.ids[p], graph.ids[int(e)]) for p in range(incidence.passages) for e in incidence.entities_of(p)}
    vectors = {t: {i: tuple(np.round(np.asarray(v.vectors[row]), 6)) for row, i in enumerate(v.ids)}
               for t in (NodeType.CHUNK, NodeType.ENTITY) if len(v := view.vectors(t))}
    return {"graph": _graph(graph), "entity_graph": _graph(view.entity_graph), "incidence": pairs, "vectors": vectors}


def _same_as_whole(tg: ThinkGraph) -> None:
    tg.refresh()
    followed = _items(tg.view)
    whole = _items(IndexView(tg.store, tg.embedder, ann_threshold=2))
    for name in followed:
        assert followed[name] == whole[name], name


@pytest.fixture
def tg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ThinkGraph:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings()
    settings.embedding.ann_threshold = 2
    return ThinkGraph(tmp_path / "f.db", settings=settings, embedder=HashEmbedder())


def test_the_view_follows_additions_removals_and_edits_without_reading_the_whole_index(
        tg: ThinkGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    tg.settings.index.prepare_view = False  # each view built below, where the store's reads are watched
    with tg:
        tg.add_documents(DOCS[:20])  # the first build: the log starts at its end
        assert tg.store.change_position() is not None
        tg.view.prepare()
        tg.add_documents(DOCS[20:25])
        tg.remove_documents(["d3", "d7"])
        tg.add_documents([SourceDocument(id="d5", title="Note 5", source="t",
                                         text="Kestrel Bay hired Ilse Brandt in 1901; Oskar Vik left Skarn.")])
        whole_reads: list[object] = []
        for name in ("edge_columns", "iter_nodes"):
            real = getattr(tg.store, name)
            monkeypatch.setattr(tg.store, name, lambda *a, _n=name, _real=real, **k: whole_reads.append((_n, a))
                                or _real(*a, **k))
        real_vectors = tg.store.get_vectors
        monkeypatch.setattr(tg.store, "get_vectors", lambda types=None, *, node_ids=None: (
            whole_reads.append(("get_vectors", types)) if node_ids is None else None) or real_vectors(
            types, node_ids=node_ids))
        tg.refresh()
        tg.view.prepare()
        # only the entity linker still reads every entity (and nothing reads every edge or passage)
        assert whole_reads == [("iter_nodes", (NodeType.ENTITY,))]
        monkeypatch.undo()
        _same_as_whole(tg)


def test_edges_between_nodes_already_indexed_and_edges_older_than_their_node(tg: ThinkGraph) -> None:
    with tg:
        tg.add_documents(DOCS[:10])
        linked = next(iter(tg.store.iter_edges(["CO_OCCURS"])))
        a, b = linked.src, linked.dst  # two entities with an edge between them already
        others = [n.id for n in tg.store.iter_nodes(NodeType.ENTITY) if n.id not in (a, b)][:2]
        tg.view.prepare()
        # an imported fact beside the edge already there, an edge naming a node not yet there, a self-loop
        fact = Edge(a, b, "OPENREL", props={"predicate": "admires"})
        tg.store.add_edges([fact, Edge(others[0], "ent:late", "OPENREL", props={"predicate": "meets"}),
                            Edge(others[1], others[1], "CO_OCCURS")])
        _same_as_whole(tg)
        tg.view.prepare()
        tg.store.add_nodes([Node("ent:late", "entity", "Late Arrival")])
        tg.store.put_vectors(["ent:late"], tg.embedder.embed(["Late Arrival"]))
        _same_as_whole(tg)
        tg.view.prepare()
        tg.store.delete_edges([linked])  # the pair keeps the imported fact only
        _same_as_whole(tg)
        tg.view.prepare()
        tg.store.delete_node(b)
        tg.store.delete_edges([fact])
        _same_as_whole(tg)


def test_a_revision_the_log_does_not_reach_is_built_whole(tg: ThinkGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    with tg:
        tg.add_documents(DOCS[:8])
        origin = tg.view.cache.folder / "origin.json"  # type: ignore[union-attr]
        kept = json.loads(origin.read_text())
        assert kept["position"] == tg.store.change_position()
        origin.write_text(json.dumps({**kept, "position": kept["position"] - 1}))  # before this log began
        reads: list[object] = []
        real = tg.store.edge_columns
        monkeypatch.setattr(tg.store, "edge_columns", lambda types: reads.append(types) or real(types))
        tg.add_documents(DOCS[8:12])
        assert reads  # the graphs were built from every edge
        monkeypatch.undo()
        _same_as_whole(tg)


def test_an_index_built_anew_at_the_same_path_never_follows_the_old_one_s_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its log starts again from the same positions: the revision each position belongs to tells the
    two apart (fresh-eye finding: the old index's arrays were reused, and `ask` found no evidence)."""
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings()
    settings.embedding.ann_threshold = 2
    with ThinkGraph(tmp_path / "p.db", settings=settings, embedder=HashEmbedder()) as first:
        first.add_documents(DOCS[:6])
    (tmp_path / "p.db").unlink()
    other = [SourceDocument(id=f"e{i}", title=f"Dam {i}", source="t",
                            text=f"Engineer Zelda Marsh{i} designed the Dunmarrow Dam {i} in {1900 + i}.")
             for i in range(5)]
    with ThinkGraph(tmp_path / "p.db", settings=settings, embedder=HashEmbedder()) as second:
        second.add_documents(other)
        answer = second.retrieve("Who designed the Dunmarrow Dam 3?", "naive")
        assert {c.doc_id for c in answer.citations} <= {d.id for d in other} and answer.citations
        _same_as_whole(second)


def test_a_backup_put_back_never_follows_the_lost_revisions_view(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings()
    settings.embedding.ann_threshold = 2
    path = tmp_path / "k.db"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.add_documents(DOCS[:8])
    backup = path.read_bytes()
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.add_documents(DOCS[8:16])  # a view of these is kept, at a later position
    path.write_bytes(backup)
    for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        extra.unlink(missing_ok=True)
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.add_documents(DOCS[20:30])  # a later position again, on another branch of the log
        _same_as_whole(tg)
