"""The on-disk view cache: what a new process reads equals what it would build from the index, a
changed index never meets an old copy, and a broken or unwritable cache only costs time."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.embed.hashing import HashingEmbedder
from thinkgraph.models import EdgeType, Node, NodeType
from thinkgraph.retrieval.view_cache import KEEP_REVISIONS, ViewCache, prune
from thinkgraph.retrieval.views import IndexView
from thinkgraph.store.sqlite import SQLiteStore

QUESTION = "Which harbour did the fleet of the admiral sail from?"


@pytest.fixture
def bridge(tmp_path: Path) -> Path:
    path = tmp_path / "bridge.db"
    with ThinkGraph(path, settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    return path


def _view(store: SQLiteStore, root: Path | None) -> IndexView:
    cache = ViewCache.for_store(store, root) if root is not None else None
    return IndexView(store, HashEmbedder(), cache=cache)


def _everything(view: IndexView) -> dict[str, object]:
    """Every derived part of the view in plain, comparable form."""
    out: dict[str, object] = {}
    for node_type in (NodeType.CHUNK, NodeType.TRIPLET, NodeType.ENTITY):
        vectors = view.vectors(node_type)
        out[f"ids-{node_type}"] = list(vectors.ids)
        out[f"vectors-{node_type}"] = np.asarray(vectors.vectors).round(6).tolist()
        out[f"bm25-{node_type}"] = view.lexical(node_type).scores(QUESTION).round(6).tolist()
    for name in ("entity_passage_graph", "entity_graph"):
        graph = getattr(view, name)
        out[name] = (list(graph.ids), graph.adjacency.toarray().tolist())
        out[f"{name}-rows"] = {node_id: graph.index.get(node_id) for node_id in [*graph.ids, "ent:unknown"]}
    out["links"] = sorted((link.entity_id, link.confidence) for link in view.entity_linker.link(QUESTION))
    passages = view.passage_entities
    out["passage_entities"] = {c: passages.entities(c) for c in view.vectors(NodeType.CHUNK).ids}
    out["entity_passages"] = {e: passages.passages(e) for e in view.entity_passage_graph.ids}
    out["relation_vectors"] = (list(view.relation_vectors[0]), np.asarray(view.relation_vectors[1]).round(6).tolist())
    chunks = view.vectors(NodeType.CHUNK)
    out["chunk-positions"] = {c: chunks.position.get(c) for c in [*chunks.ids, "chunk:unknown"]}
    out["relation_labels"] = sorted(view.relation_labels.items())
    return out


def test_a_new_view_reads_from_the_cache_exactly_what_the_index_gives(bridge: Path, tmp_path: Path) -> None:
    root = tmp_path / "views"
    store = SQLiteStore(bridge)
    built = _everything(_view(store, root))
    folders = list(root.iterdir())
    assert len(folders) == 1 and {p.name for p in folders[0].iterdir()} >= {
        "vectors-chunk", "lexical-chunk", "graph-entity-passage", "linker", "passage-entities", "vectors-relations"}
    cached_view = _view(store, root)
    assert _everything(cached_view) == built == _everything(_view(store, None))
    assert isinstance(cached_view.vectors(NodeType.CHUNK).vectors.base, np.memmap)  # mapped, not decoded
    store.close()


def test_answers_are_the_same_with_and_without_the_cache(bridge: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    answers = []
    for view_cache in (False, True, True):  # off; on and filling; on and reading
        settings = Settings()
        settings.index.view_cache = view_cache
        with ThinkGraph.open(bridge, settings=settings, embedder=HashEmbedder()) as tg:
            answer = tg.ask(QUESTION, method="ppr")
            answers.append(([c.chunk_id for c in answer.citations], answer.trace[0].outputs))
    assert answers[0] == answers[1] == answers[2]
    assert len(list((tmp_path / "cache" / "views").iterdir())) == 1


def test_every_change_to_the_index_gives_a_new_revision_and_a_fresh_view(bridge: Path, tmp_path: Path) -> None:
    root = tmp_path / "views"
    store = SQLiteStore(bridge)
    before = _view(store, root)
    assert NodeType.ENTITY in {n.type for n in store.iter_nodes(NodeType.ENTITY)}
    old_names = len(before.entity_linker)
    store.add_nodes([Node("ent:new", NodeType.ENTITY, "Quillon Brask")])
    after = _view(store, root)
    assert after.cache is not None and before.cache is not None and after.cache.folder != before.cache.folder
    assert len(after.entity_linker) == old_names + 1
    assert [link.entity_id for link in after.entity_linker.link("Who is Quillon Brask?")] == ["ent:new"]
    store.close()


def test_a_build_that_saw_the_index_change_is_not_kept(bridge: Path, tmp_path: Path) -> None:
    store = SQLiteStore(bridge)
    view = _view(store, tmp_path / "views")
    store.add_nodes([Node("ent:late", NodeType.ENTITY, "Late Arrival")])  # after the view was opened
    assert len(view.entity_linker) > 0
    assert view.cache is not None and not (view.cache.folder / "linker").exists()
    store.close()


def test_a_damaged_item_is_rebuilt_and_an_unwritable_cache_is_only_slower(
        bridge: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "views"
    store = SQLiteStore(bridge)
    expected = _everything(_view(store, root))
    (folder,) = root.iterdir()
    (folder / "vectors-chunk" / "matrix.npy").write_bytes(b"not numpy")
    (folder / "linker" / "hashes.npy").write_bytes(b"not numpy")
    (folder / "vectors-entity" / "matrix.npy").write_bytes(b"")  # empty: numpy raises EOFError
    with caplog.at_level(logging.WARNING):
        assert _everything(_view(store, root)) == expected
    assert sum("unreadable" in r.message for r in caplog.records) == 3
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x", "utf-8")
    assert _everything(_view(store, blocked / "views")) == expected
    store.close()


def test_old_revisions_are_pruned_least_recently_used_first(tmp_path: Path) -> None:
    for i in range(KEEP_REVISIONS + 3):
        (tmp_path / f"v1-{i}").mkdir()
        os.utime(tmp_path / f"v1-{i}", (1000 + i, 1000 + i))
    os.utime(tmp_path / "v1-0", (5000, 5000))  # used recently
    prune(tmp_path, keep=KEEP_REVISIONS)
    kept = {p.name for p in tmp_path.iterdir()}
    assert len(kept) == KEEP_REVISIONS and "v1-0" in kept and "v1-1" not in kept


def test_an_index_without_a_revision_opened_read_only_is_not_cached(bridge: Path, tmp_path: Path) -> None:
    store = SQLiteStore(bridge)
    with store.transaction():
        store._db.execute("DELETE FROM meta WHERE key='content_revision'")  # as written by an older version
    store.close()
    read_only = SQLiteStore(bridge, read_only=True)  # (as a user without write permission opens it)
    assert read_only.content_revision() is None and ViewCache.for_store(read_only, tmp_path) is None
    read_only.close()
    writable = SQLiteStore(bridge)  # opening it writable gives it one
    assert writable.content_revision()
    writable.close()


def test_cli_ask_in_new_processes_fills_then_reads_the_cache(tmp_path: Path) -> None:
    bridge = tmp_path / "hashing.db"
    with ThinkGraph(bridge, settings=Settings(), embedder=HashingEmbedder()) as tg:  # the CLI's `hashing` provider
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    env = {**os.environ, "THINKGRAPH_CACHE_DIR": str(tmp_path / "cache"), "THINKGRAPH_EMBED_PROVIDER": "hashing"}
    outputs = []
    for run in range(3):
        if run == 2:  # an emptied item (numpy: EOFError) is rebuilt, as any damaged one
            (_revision_folder(tmp_path / "cache") / "vectors-chunk" / "matrix.npy").write_bytes(b"")
        done = subprocess.run([sys.executable, "-m", "thinkgraph", "-i", str(bridge), "ask", QUESTION, "--json"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
        folder = _revision_folder(tmp_path / "cache")
        assert (folder / "vectors-chunk").is_dir() and (folder / "graph-entity-passage").is_dir()
    strip = [[line for line in out.splitlines() if '"seconds"' not in line] for out in outputs]
    assert strip[0] == strip[1] == strip[2]


def _revision_folder(root: Path) -> Path:
    (folder,) = [p for p in (root / "views").iterdir() if p.is_dir()]
    return folder


def test_indexing_ends_with_the_view_built_and_its_hnsw_graph_kept(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """[index] prepare_view: the first question after `index` reads everything from the cache, the
    passages' HNSW graph included (built at a million passages it took the first `ask` 10 minutes)."""
    from thinkgraph.embed.vector_index import HNSW_SUFFIX

    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings()
    settings.embedding.ann_threshold = 2  # HNSW for the passages even on a small corpus
    path = tmp_path / "bridge.db"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        report = tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
        assert any(name.startswith("retrieval view") for name in report.timings)
    folder = _revision_folder(tmp_path / "cache")
    for item in ("vectors-chunk", "lexical-chunk", "graph-entity-passage", "linker", "passage-entities",
                 "vectors-relations"):
        assert (folder / item).is_dir(), item
    assert list((folder / "vectors-chunk").glob(f"*{HNSW_SUFFIX}"))
    with ThinkGraph.open(path, settings=settings, embedder=HashEmbedder()) as tg:
        built: list[str] = []
        monkeypatch.setattr(tg.store, "get_vectors", lambda *a, **k: built.append("vectors") or ([], None))
        answer = tg.retrieve(QUESTION, "ppr")
        assert answer.citations and not built  # nothing decoded from the index again
    assert (folder / "prepared").is_dir()
    with ThinkGraph.open(path, settings=settings, embedder=HashEmbedder()) as tg:
        def refuse(node_type: str) -> None:
            raise AssertionError(f"read {node_type} vectors again")

        monkeypatch.setattr(tg.view, "vectors", refuse)
        tg.view.prepare()  # this revision was prepared: nothing is read back


def test_prepare_view_off_leaves_the_first_question_to_build_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings()
    settings.index.prepare_view = False
    with ThinkGraph(tmp_path / "bridge.db", settings=settings, embedder=HashEmbedder()) as tg:
        report = tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
        assert not any(name.startswith("retrieval view") for name in report.timings)
    assert not (tmp_path / "cache" / "views").exists() or not any((tmp_path / "cache" / "views").iterdir())


def test_the_passage_entity_arrays_match_the_contains_edges(bridge: Path, tmp_path: Path) -> None:
    """An independent reference: the CONTAINS edges of the store, read as sets of ids both ways."""
    store = SQLiteStore(bridge)
    view = _view(store, tmp_path / "views")
    expected: dict[str, set[str]] = {}
    for edge in store.iter_edges([EdgeType.CONTAINS]):
        expected.setdefault(edge.src, set()).add(edge.dst)
    passages = view.passage_entities
    chunk_ids = view.vectors(NodeType.CHUNK).ids
    assert {c: set(passages.entities(c)) for c in chunk_ids if passages.entities(c)} == expected
    for entity in {e for ents in expected.values() for e in ents}:
        holders = {c for c, ents in expected.items() if entity in ents}
        assert set(passages.passages(entity)) == holders and passages.passage_count(entity) == len(holders)
    assert passages.entities("chunk:unknown") == [] and passages.passage_count("ent:unknown") == 0
    store.close()


def test_a_view_built_by_a_question_keeps_its_hnsw_graph_for_the_next_process(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Without [index] prepare_view the first question builds the view: its HNSW graph is built over the
    kept (memory-mapped) copy and kept beside it, so the next process reads it (before, the first
    process built it in memory and the second built it again: 47 s at 100k passages)."""
    from thinkgraph.embed import vector_index
    from thinkgraph.embed.vector_index import HNSW_SUFFIX

    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings()
    settings.embedding.ann_threshold = 2
    settings.index.prepare_view = False
    path = tmp_path / "bridge.db"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
        assert tg.retrieve(QUESTION, "ppr").citations
        assert isinstance(tg.view.vectors(NodeType.CHUNK).vectors.base, np.memmap)
    kept = list((_revision_folder(tmp_path / "cache") / "vectors-chunk").glob(f"*{HNSW_SUFFIX}"))
    assert kept
    stamp = kept[0].stat().st_mtime_ns
    builds: list[int] = []
    original = vector_index.VectorIndex._build_ann
    monkeypatch.setattr(vector_index.VectorIndex, "_build_ann",
                        lambda self, seed, kept=None, earlier=None: builds.append(
                            1 if kept is None or not kept.is_file() else 0) or original(self, seed, kept, earlier))
    with ThinkGraph.open(path, settings=settings, embedder=HashEmbedder()) as tg:
        assert tg.retrieve(QUESTION, "ppr").citations
    assert kept[0].stat().st_mtime_ns == stamp and 1 not in builds  # read, not built again
