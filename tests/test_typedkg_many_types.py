"""A typed graph with thousands of edge types (a corpus-built index has one per OpenIE predicate and
its inverse): a fixed number of files whatever the count, adjacency equal to a plain reference,
first-format graphs read with a bounded number of files open, and a graph definition within its
character budget that names the most frequent types."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from support import HashEmbedder
from thinkgraph.errors import InputError
from thinkgraph.typedkg import TypedGraph, TypedGraphBuilder, layout
from thinkgraph.typedkg.adjacency import LEGACY_OPEN_TYPES, PerTypeFiles
from thinkgraph.typedkg.location import open_typed_graph

EDGE_TYPES = 3000
NODES = 400


def build(tmp_path: Path, types: int = EDGE_TYPES) -> tuple[TypedGraph, dict[tuple[str, str], list[str]]]:
    """Edge type ``rel k`` has about 3000 / (k + 1) edges (a long tail, as predicates have); node types
    ``kind j`` have j + 1 nodes; the reference keeps each (node, edge type)'s neighbours in order."""
    rng = random.Random(7)
    builder = TypedGraphBuilder()
    nodes = [f"n{i}" for i in range(NODES)]
    for i, ext in enumerate(nodes):
        builder.add_node(ext, f"kind {min(i // 10, 29)}", {"name": f"Node {i}", "extra": i})
    reference: dict[tuple[str, str], list[str]] = {}
    for k in range(types):
        for _ in range(max(1, EDGE_TYPES // (k + 1))):
            src, dst = rng.choice(nodes), rng.choice(nodes)
            builder.add_edge(src, f"rel {k}", dst)
            reference.setdefault((src, f"rel {k}"), []).append(dst)
    return TypedGraph(builder.write(tmp_path / "many.kg")), reference


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> tuple[TypedGraph, dict[tuple[str, str], list[str]]]:
    return build(tmp_path_factory.mktemp("many"))


def check_adjacency(graph: TypedGraph, reference: dict[tuple[str, str], list[str]], sample: int = 300) -> None:
    rng = random.Random(3)
    for src, edge_type in rng.sample(sorted(reference), sample):
        node = graph.resolve(src)
        assert [graph.ext_id(int(n)) for n in graph.neighbors(node, edge_type)] == reference[(src, edge_type)]
        assert graph.degree(node, edge_type) == len(reference[(src, edge_type)])
    for src in ("n0", "n17", "n399"):
        expected = {t: len(v) for (s, t), v in reference.items() if s == src}
        node = graph.resolve(src)
        assert graph.edge_types_of(node) == sorted(expected, key=lambda t: int(t.split()[1]))
        degrees = graph.edge_type_degrees(node)
        assert dict(degrees) == expected and [c for _, c in degrees] == sorted(expected.values(), reverse=True)
        last = graph.edge_type_names[-1]
        assert len(graph.neighbors(node, last)) == len(reference.get((src, last), []))


def test_many_edge_types_are_a_fixed_number_of_files(many) -> None:  # noqa: ANN001
    graph, reference = many
    files = [p for p in graph.path.rglob("*") if p.is_file()]
    assert len(files) <= 16, sorted(p.name for p in files)  # not two per edge type
    assert graph.meta["version"] == layout.FORMAT_VERSION and len(graph.edge_type_names) == EDGE_TYPES
    check_adjacency(graph, reference)


def test_unknown_edge_type_message_is_bounded(many) -> None:  # noqa: ANN001
    graph, _ = many
    with pytest.raises(InputError, match=r"unknown edge type 'writer'; edge types: rel 0, rel 1, .* \(and 2970 more\)"
                       ) as caught:
        graph.neighbors(0, "writer")
    assert len(str(caught.value)) < 500
    assert graph.has_edge_type(" 'rel 5' ") and not graph.has_edge_type("writer")


@pytest.mark.parametrize("budget", [500, 2000, 4000, 12000])
def test_description_stays_within_its_budget_and_names_the_most_frequent_types(many, budget: int) -> None:  # noqa: ANN001
    graph, _ = many
    full = graph.describe()
    assert len(full) > 100_000 and "edge type rel 2999:" in full  # unbounded: every type
    described = graph.description(budget)
    text = described.text
    assert len(text) <= budget and not described.complete
    edge_lines = [line for line in text.splitlines() if line.startswith("- edge type ")]
    listed = [line.split(":")[0].removeprefix("- edge type ") for line in edge_lines]
    assert listed == [f"rel {k}" for k in range(len(listed))] and len(listed) >= budget // 200  # most frequent
    assert edge_lines[0].endswith(f"({graph.meta['edges']['rel 0']:,} edges)")
    assert described.hidden_edge_types == EDGE_TYPES - len(listed)
    assert f"and {described.hidden_edge_types:,} more edge types (of 3,000)" in text
    node_lines = [line for line in text.splitlines() if " nodes (" in line]
    assert node_lines[0].startswith("- kind 29 nodes (110), features: extra, name")  # the largest node type first
    assert len(node_lines) + described.hidden_node_types == 30


def test_a_small_graph_is_described_whole_and_unchanged(tmp_path: Path) -> None:
    builder = TypedGraphBuilder()
    builder.add_node("p1", "paper", {"title": "T"})
    builder.add_node("a1", "author", {"name": "A"})
    builder.add_edge("p1", "author", "a1")
    graph = TypedGraph(builder.write(tmp_path / "s.kg"))
    expected = "- paper nodes, features: title\n- author nodes, features: name\n- edge type author: paper -> author"
    assert graph.describe() == graph.describe(4000) == expected and graph.description(500).complete


def to_first_format(graph: TypedGraph, target: Path) -> Path:
    """The same graph written as format 1 wrote it: one indptr/indices pair per edge type under csr/."""
    shutil.copytree(graph.path, target)
    (target / layout.CSR_DIR).mkdir()
    indptr, indices = np.load(target / layout.EDGE_INDPTR), np.load(target / layout.EDGE_INDICES)
    kinds = np.load(target / layout.EDGE_TYPES)
    src = np.repeat(np.arange(graph.node_count), np.diff(indptr))
    for k in range(len(graph.edge_type_names)):
        mine = kinds == k
        np.save(target / layout.CSR_DIR / f"{k}.indptr.npy",
                layout.offsets(np.bincount(src[mine], minlength=graph.node_count)))
        np.save(target / layout.CSR_DIR / f"{k}.indices.npy", indices[mine].astype(np.int32))
    for name in (layout.EDGE_INDPTR, layout.EDGE_INDICES, layout.EDGE_TYPES):
        (target / name).unlink()
    meta = json.loads((target / layout.META).read_text())
    (target / layout.META).write_text(json.dumps({**meta, "version": 1}))
    return target


def test_a_first_format_graph_is_read_with_few_files_open(tmp_path: Path) -> None:
    graph, reference = build(tmp_path, types=3 * LEGACY_OPEN_TYPES)
    old = TypedGraph(to_first_format(graph, tmp_path / "old.kg"))
    adjacency = old._adjacency  # noqa: SLF001
    assert isinstance(adjacency, PerTypeFiles)
    check_adjacency(old, reference, sample=100)
    assert len(adjacency._open) <= LEGACY_OPEN_TYPES  # noqa: SLF001 - scanning every type closed the rest


def test_a_corpus_built_graph_in_the_first_format_is_rebuilt(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge()
    graph = open_typed_graph(tg.store, tg.store.path, HashEmbedder())
    meta = json.loads((graph.path / layout.META).read_text())
    (graph.path / layout.META).write_text(json.dumps({**meta, "version": 1}))
    again = open_typed_graph(tg.store, tg.store.path, HashEmbedder())
    assert again.meta["version"] == layout.FORMAT_VERSION == 2 and (again.path / layout.EDGE_TYPES).is_file()
