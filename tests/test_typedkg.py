"""The typed graph: GRBench import, compact CSR adjacency against a plain dict reference, id look-up,
features, vector search, typed triples and a corpus-built index as a typed graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.errors import IndexFileError, InputError
from thinkgraph.typedkg import TypedGraph, TypedGraphBuilder
from thinkgraph.typedkg.importers import load_from_index, load_grbench, load_typed_triples

GRBENCH = FIXTURES / "grbench_small.json"


@pytest.fixture(params=[False, True], ids=["per-map", "per-node"])
def graph(tmp_path: Path, request: pytest.FixtureRequest) -> TypedGraph:
    builder = TypedGraphBuilder()
    assert load_grbench(GRBENCH, builder, per_node=request.param) == 8
    embedder = HashEmbedder()
    return TypedGraph(builder.write(tmp_path / "g.kg", embedder), embedder)


def test_grbench_import_matches_the_source_adjacency(graph: TypedGraph) -> None:
    raw = json.loads(GRBENCH.read_text())
    for key, nodes in raw.items():
        for ext_id, record in nodes.items():
            node = graph.lookup(ext_id)
            assert node is not None and graph.ext_id(node) == ext_id and graph.node_type(node) == key[:-6]
            assert graph.features(node) == record["features"]
            for edge_type, targets in record["neighbors"].items():
                assert [graph.ext_id(int(n)) for n in graph.neighbors(node, edge_type)] == targets
                assert graph.degree(node, edge_type) == len(targets)
    p1 = graph.lookup("p1")
    assert graph.edge_types_of(p1) == ["author", "venue", "reference"]  # cited_by is empty for p1
    assert graph.text(p1) == "Graph reasoning with language models" and graph.node_count == 8
    assert graph.lookup("nope") is None and graph.resolve(" 'a2' ") == graph.lookup("a2")
    assert "paper nodes, features: keywords, title, year" in graph.describe()
    assert "edge type author: paper -> author" in graph.describe()


def test_unknown_ids_and_edge_types_are_input_errors(graph: TypedGraph) -> None:
    with pytest.raises(InputError, match="no node 'p9'"):
        graph.resolve("p9")
    with pytest.raises(InputError, match="unknown edge type 'writer'; edge types: author"):
        graph.neighbors(0, "writer")


def test_vector_search_finds_nodes_by_text(graph: TypedGraph) -> None:
    (hit,) = graph.search("Tomasz Nowak", 1)
    assert hit.ext_id == "a2" and hit.score == pytest.approx(1.0, abs=1e-5)
    hits = graph.search("citation networks random walks", 3)
    assert hits[0].ext_id == "p2" and len(hits) == 3
    with pytest.raises(IndexFileError, match="embedded with test:hash"):
        TypedGraph(graph.path, HashEmbedder(name="other")).search("x")


def test_a_search_runs_on_one_openmp_thread_and_leaves_the_callers_setting(graph: TypedGraph) -> None:
    import faiss

    seen: list[int] = []
    real_search = graph._vectors.index.search  # noqa: SLF001

    def spying(query, k):  # noqa: ANN001, ANN202
        seen.append(faiss.omp_get_max_threads())
        return real_search(query, k)

    faiss.omp_set_num_threads(2)
    graph.search("warm up", 1)  # opens the vector index
    graph._vectors.index.search = spying  # noqa: SLF001
    try:
        assert graph.search("Tomasz Nowak", 1)[0].ext_id == "a2"
    finally:
        graph._vectors.index.search = real_search  # noqa: SLF001
    assert seen == [1] and faiss.omp_get_max_threads() == 2


def test_missing_and_malformed_graph_files(tmp_path: Path) -> None:
    with pytest.raises(IndexFileError, match="no typed graph"):
        TypedGraph(tmp_path / "none.kg")
    bad = tmp_path / "bad.json"
    bad.write_text('{"paper_nodes": {"p1": {"features": {}, "neighbors": {}}, "p2": [1, 2]}, "x": 1, "author_nodes": {')
    for per_node in (False, True):
        with pytest.raises(InputError, match="bad.json: malformed JSON"):
            load_grbench(bad, TypedGraphBuilder(), per_node=per_node)
    skipped = tmp_path / "skip.json"
    skipped.write_text('{"meta": 3, "paper_nodes": {"p1": {"features": {"title": "t"}, "neighbors": {}}, "p2": [1]},'
                       ' "venue_nodes": {"v1": {"features": {"name": "V"}, "neighbors": {"paper": ["p1"]}}}}')
    for per_node in (False, True):
        builder = TypedGraphBuilder()
        assert load_grbench(skipped, builder, per_node=per_node) == 2 and builder.skipped == 1
        graph = TypedGraph(builder.write(tmp_path / f"s{per_node}.kg"))
        assert graph.node_type(graph.resolve("v1")) == "venue" and graph.node_type(graph.resolve("p1")) == "paper"


def test_typed_triples_and_unknown_neighbour_type(tmp_path: Path) -> None:
    triples = tmp_path / "t.tsv"
    triples.write_text("KRT39\texpressed_in\thead\tgene\tanatomy\nKRT39\texpressed_in\tskin of body\n"
                       "short\trow\n", encoding="utf-8")
    builder = TypedGraphBuilder()
    assert load_typed_triples(triples, builder) == 2 and builder.skipped == 1
    graph = TypedGraph(builder.write(tmp_path / "t.kg"))
    gene = graph.resolve("KRT39")
    assert graph.node_type(gene) == "gene"
    assert sorted(graph.text(int(n)) for n in graph.neighbors(gene, "expressed_in")) == ["head", "skin of body"]
    assert graph.node_type(graph.resolve("skin of body")) == "entity"
    with pytest.raises(IndexFileError, match="no vector index"):
        graph.search("KRT39")


def test_corpus_index_as_typed_graph(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    tg = open_bridge()
    builder = TypedGraphBuilder()
    added = load_from_index(tg.store, builder)
    graph = TypedGraph(builder.write(tmp_path / "c.kg"))
    counts = tg.store.count_nodes()
    assert added == counts["entity"] + counts["chunk"] == graph.node_count
    some_edge = next(tg.store.iter_edges(["OPENREL"]))
    src = graph.resolve(some_edge.src)
    predicate = some_edge.props["predicate"]
    assert some_edge.dst in [graph.ext_id(int(n)) for n in graph.neighbors(src, predicate)]
    assert some_edge.src in [graph.ext_id(int(n)) for n in graph.neighbors(graph.resolve(some_edge.dst),
                                                                               predicate + "~")]
    passage = graph.neighbors(src, "mentioned_in")
    assert len(passage) and graph.node_type(int(passage[0])) == "passage"
    assert graph.features(int(passage[0]))["text"]
