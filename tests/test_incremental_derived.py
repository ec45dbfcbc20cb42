"""Incremental derived stages on small generated corpora: indexing in batches, or removing documents,
gives the index a rebuild gives (the same SYNONYM edges, the same extracted graph, communities whose
modularity is within 2% of a rebuild's), and a small change rewrites only what it touched."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.graph.leiden import modularity
from thinkgraph.index.communities import _entity_graph
from thinkgraph.index.resolve import exact_synonym_pairs
from thinkgraph.index.stages import missing_stages
from thinkgraph.index.synonym_state import state_folder
from thinkgraph.models import DERIVED_EDGE_TYPES, SourceDocument

_spec = importlib.util.spec_from_file_location(
    "scale_corpus", Path(__file__).resolve().parents[1] / "benchmarks" / "scale_corpus.py")
assert _spec is not None and _spec.loader is not None
scale_corpus = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("scale_corpus", scale_corpus)
_spec.loader.exec_module(scale_corpus)

PASSAGES = 1200


def _settings() -> Settings:
    s = Settings()
    s.index.extractor = "nolm"
    s.index.communities = "always"
    return s


@pytest.fixture(scope="module")
def docs() -> list[SourceDocument]:
    return [SourceDocument(id=p["id"], title=p["title"], text=p["text"], source="scale")
            for p in scale_corpus.ScaleCorpus(PASSAGES, seed=3).passages()]


def _open(path: Path) -> ThinkGraph:
    return ThinkGraph(path, settings=_settings(), embedder=HashEmbedder())


@pytest.fixture(scope="module")
def one_shot(tmp_path_factory: pytest.TempPathFactory, docs: list[SourceDocument]) -> Iterator[ThinkGraph]:
    with _open(tmp_path_factory.mktemp("one") / "one.db") as tg:
        tg.add_documents(docs)
        yield tg


def _extracted(tg: ThinkGraph) -> dict[str, Any]:
    """Everything but the derived stages: nodes (not communities) and their edges."""
    return {"nodes": sorted((n.id, n.text) for n in tg.store.iter_nodes() if n.type != "community"),
            "edges": sorted((e.src, e.dst, str(e.type)) for e in tg.store.iter_edges()
                            if e.type not in DERIVED_EDGE_TYPES)}


def _synonyms(tg: ThinkGraph) -> set[tuple[str, str]]:
    return {(e.src, e.dst) for e in tg.store.iter_edges(["SYNONYM"])}


def _exact_synonyms(tg: ThinkGraph) -> set[tuple[str, str]]:
    ids, vectors = tg.store.get_vectors(["entity"])
    names = {n.id: n.text for n in tg.store.iter_nodes("entity")}
    return set(exact_synonym_pairs(ids, vectors, [names[i] for i in ids], 0.9, lexical=True))  # HashEmbedder


def _top_modularity(tg: ThinkGraph) -> float:
    graph = _entity_graph(tg.store)
    index = {n.id: i for i, n in enumerate(graph.nodes)}
    top = {n.id for n in tg.store.iter_nodes("community") if n.props["level"] == 0}
    members: dict[str, list[int]] = {}
    for e in tg.store.iter_edges(["SUMMARY_FOR"]):
        if e.src in top:
            members.setdefault(e.src, []).append(index[e.dst])
    return modularity(len(graph.nodes), graph.edges, graph.weights, list(members.values()))


def _check_hierarchy(tg: ThinkGraph) -> None:
    """Each community's node says what its edges hold (level, size, the fallback text naming its
    members), entities are in one community per level, a child's members are its parent's, one parent
    each, and every node has a vector."""
    communities = {n.id: n for n in tg.store.iter_nodes("community")}
    members: dict[str, set[str]] = {}
    for e in tg.store.iter_edges(["SUMMARY_FOR"]):
        members.setdefault(e.src, set()).add(e.dst)
    assert set(members) == set(communities)
    for cid, node in communities.items():
        assert cid.startswith(f"com:{node.props['level']}:")
        assert node.props["size"] == len(members[cid]) and node.text.startswith(f"Group of {len(members[cid])} ")
    parents = [e.src for e in tg.store.iter_edges(["CHILD_OF"])]
    assert len(parents) == len(set(parents)) == sum(1 for n in communities.values() if n.props["level"] > 0)
    seen: set[tuple[int, str]] = set()
    for cid, entity_ids in members.items():
        for entity in entity_ids:
            key = (communities[cid].props["level"], entity)
            assert key not in seen
            seen.add(key)
    for e in tg.store.iter_edges(["CHILD_OF"]):
        assert members[e.src] <= members[e.dst]
    assert not tg.store.nodes_missing_vectors(_settings().index.embed_node_types)
    assert missing_stages(tg.store) == []


def test_indexing_in_batches_gives_the_index_of_one_pass(tmp_path: Path, docs: list[SourceDocument],
                                                         one_shot: ThinkGraph) -> None:
    with _open(tmp_path / "batches.db") as tg:
        for start in range(0, len(docs), 300):
            tg.add_documents(docs[start:start + 300])
        assert _extracted(tg) == _extracted(one_shot)
        assert _synonyms(tg) == _synonyms(one_shot) == _exact_synonyms(tg)
        assert _top_modularity(tg) >= 0.98 * _top_modularity(one_shot)
        _check_hierarchy(tg)
        report = tg.index([], rebuild_derived=True)  # --rebuild-derived: from scratch, as one pass
        assert report.synonyms_searched == len(list(tg.store.iter_nodes("entity")))
        assert _synonyms(tg) == _synonyms(one_shot)
        assert sorted(n.id for n in tg.store.iter_nodes("community")) == \
            sorted(n.id for n in one_shot.store.iter_nodes("community"))


def test_removing_documents_gives_the_index_of_the_rest(tmp_path: Path, docs: list[SourceDocument]) -> None:
    gone = {d.id for d in docs[::12]}
    rest = [d for d in docs if d.id not in gone]
    with _open(tmp_path / "removed.db") as tg, _open(tmp_path / "rest.db") as reference:
        tg.add_documents(docs)
        tg.remove_documents(sorted(gone))
        reference.add_documents(rest)
        assert _extracted(tg) == _extracted(reference)
        assert _synonyms(tg) == _synonyms(reference) == _exact_synonyms(tg)
        assert _top_modularity(tg) >= 0.98 * _top_modularity(reference)
        _check_hierarchy(tg)


def test_a_small_change_searches_its_new_entities_and_rewrites_few_communities(
        tmp_path: Path, docs: list[SourceDocument]) -> None:
    with _open(tmp_path / "small.db") as tg:
        tg.add_documents(docs[:-6])
        before = {n.id for n in tg.store.iter_nodes("entity")}
        before_ids = {n.id for n in tg.store.iter_nodes("community")}
        communities = len(before_ids)
        report = tg.add_documents(docs[-6:])
        new = {n.id for n in tg.store.iter_nodes("entity")} - before
        assert report.synonyms_searched == len(new)
        assert 0 < report.communities_written < 0.25 * communities
        assert _synonyms(tg) == _exact_synonyms(tg)
        _check_hierarchy(tg)
        after = {n.id for n in tg.store.iter_nodes("community")}
        assert len(before_ids & after) >= 0.9 * len(before_ids)  # a community found again keeps its id
        shutil.rmtree(state_folder(tg.store))  # state lost (another host, deleted): rebuilt, same result
        tg.remove_documents([d.id for d in docs[-6:]])
        assert _synonyms(tg) == _exact_synonyms(tg)
        _check_hierarchy(tg)


def test_the_cli_rebuilds_the_derived_stages_on_request(tmp_path: Path, docs: list[SourceDocument]) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n" for d in docs[:200]),
                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
    env |= {"THINKGRAPH_EMBED_PROVIDER": "hashing", "HF_HUB_OFFLINE": "1"}
    base = [sys.executable, "-m", "thinkgraph", "-i", str(tmp_path / "cli.db")]

    def index(*extra: str) -> dict[str, Any]:
        done = subprocess.run([*base, "index", str(corpus), "-e", "nolm", "--json", *extra], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    first = index()
    assert first["synonyms_searched"] > 0
    assert index()["rebuilt_stages"] == []  # nothing changed: nothing to do
    rebuilt = index("--rebuild-derived")
    assert rebuilt["rebuilt_stages"] == ["vectors", "synonyms", "communities"]
    assert rebuilt["synonyms_searched"] == first["synonyms_searched"] and rebuilt["synonyms"] == first["synonyms"]
