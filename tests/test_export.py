"""Exports readable by other tools."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import networkx as nx
import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import UsageError
from thinkgraph.export import export_graph
from thinkgraph.index.records import EntitySpec, Extraction, TripleSpec, extraction_records
from thinkgraph.models import Chunk


@pytest.fixture
def tg(tmp_path: Path, settings: Settings) -> ThinkGraph:
    graph = ThinkGraph(tmp_path / "e.db", settings=settings, embedder=HashEmbedder())
    graph.index([FIXTURES / "corpus_small.jsonl"], openie=FIXTURES / "openie_sample.jsonl")
    yield graph
    graph.close()


def test_graphml_reads_back_in_networkx(tg: ThinkGraph, tmp_path: Path) -> None:
    (path,) = export_graph(tg.store, "graphml", tmp_path / "out" / "g.graphml")
    g = nx.read_graphml(path)
    counts = tg.store.count_nodes()
    assert g.number_of_nodes() == sum(counts.values())
    assert g.number_of_edges() == sum(tg.store.count_edges().values())
    ent = next(n for n, d in g.nodes(data=True) if d["type"] == "entity" and d["text"] == "Joseph Okafor")
    assert g.nodes[ent]["label"] == "Joseph Okafor"  # what Gephi and yEd draw
    assert any(d["type"] == "OPENREL" and d["predicate"] == "trained" and d["label"] == "trained"
               for _, _, d in g.out_edges(ent, data=True))
    chunk = next(d for _, d in g.nodes(data=True) if d["type"] == "chunk")
    assert chunk["doc_id"] and isinstance(chunk.get("start", 0), int)  # typed attributes, not one JSON string
    assert all(not isinstance(v, str) or not v.startswith("{") for _, d in g.nodes(data=True) for v in d.values())


def test_jsonl_has_nodes_with_provenance_and_edges(tg: ThinkGraph, tmp_path: Path) -> None:
    (path,) = export_graph(tg.store, "jsonl", tmp_path / "g.jsonl")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    nodes = [r for r in rows if r["kind"] == "node"]
    edges = [r for r in rows if r["kind"] == "edge"]
    assert len(nodes) == sum(tg.store.count_nodes().values()) and edges
    okafor = next(n for n in nodes if n["text"] == "Joseph Okafor")
    assert okafor["provenance"] == ["p2"]


def test_neo4j_csv_headers_and_rows(tg: ThinkGraph, tmp_path: Path) -> None:
    files = export_graph(tg.store, "neo4j", tmp_path / "neo4j")
    nodes_csv, rels_csv, script = files
    with nodes_csv.open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["id:ID", ":LABEL", "text", "props"]
    assert {r[1] for r in rows[1:]} >= {"Entity", "Chunk", "Document", "Triplet"}
    with rels_csv.open(encoding="utf-8") as handle:
        rels = list(csv.DictReader(handle))
    ids = {r[0] for r in rows[1:]}
    assert all(r[":START_ID"] in ids and r[":END_ID"] in ids for r in rels)
    assert any(r["predicate"] == "trained" for r in rels)
    assert "neo4j-admin database import" in script.read_text("utf-8")


def test_unknown_format(tg: ThinkGraph, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="valid formats: graphml, jsonl, neo4j"):
        export_graph(tg.store, "dot", tmp_path / "x")


@pytest.fixture
def typed(tg: ThinkGraph) -> ThinkGraph:
    """The index with one typed LLM triplet added (ToG-3 §3.2.1: type_s, type_p, type_o)."""
    chunk_node = next(tg.store.iter_nodes("chunk"))
    prov = next(p for p in tg.store.provenance(chunk_node.id) if p.chunk_id == chunk_node.id)
    chunk = Chunk(chunk_node.id, prov.doc_id, chunk_node.text, prov.start or 0, prov.end or 0, 10, 0)
    extraction = Extraction(entities=[EntitySpec("Vera Lind", "Person"),
                                      EntitySpec("Skarn Lighthouse", "historic building")],
                            triples=[TripleSpec("Vera Lind", "kept", "Skarn Lighthouse", subject_type="Person",
                                                object_type="historic building", relation_type="Occupation")])
    records = extraction_records(chunk, extraction)
    with tg.store.transaction():
        tg.store.add_nodes(records.nodes)
        tg.store.add_edges(records.edges)
        tg.store.add_provenance(records.provenance)
    return tg


def test_graphml_carries_typed_triplets(typed: ThinkGraph, tmp_path: Path) -> None:
    (path,) = export_graph(typed.store, "graphml", tmp_path / "t.graphml")
    g = nx.read_graphml(path)
    vera = next(n for n, d in g.nodes(data=True) if d.get("text") == "Vera Lind")
    assert g.nodes[vera]["type"] == "entity" and g.nodes[vera]["entity_type"] == "Person"
    (_, _, rel), = [(a, b, d) for a, b, d in g.out_edges(vera, data=True) if d["type"] == "OPENREL"]
    assert (rel["predicate"], rel["relation_type"], rel["subject_type"], rel["object_type"]) == (
        "kept", "Occupation", "Person", "historic building")
    triplet = next(d for _, d in g.nodes(data=True) if d["type"] == "triplet" and d.get("predicate") == "kept")
    assert (triplet["subject_type"], triplet["relation_type"], triplet["object_type"]) == (
        "Person", "Occupation", "historic building")


def test_jsonl_and_neo4j_carry_typed_triplets(typed: ThinkGraph, tmp_path: Path) -> None:
    (path,) = export_graph(typed.store, "jsonl", tmp_path / "t.jsonl")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    (edge,) = [r for r in rows if r["kind"] == "edge" and r["props"].get("predicate") == "kept"
               and r["type"] == "OPENREL"]
    assert edge["props"]["relation_type"] == "Occupation" and edge["props"]["object_type"] == "historic building"
    assert next(r for r in rows if r["text"] == "Vera Lind" and r["kind"] == "node")["props"]["type"] == "Person"
    nodes_csv, rels_csv, _ = export_graph(typed.store, "neo4j", tmp_path / "neo4j")
    with nodes_csv.open(encoding="utf-8") as handle:
        labels = {r["text"]: r[":LABEL"] for r in csv.DictReader(handle)}
    assert labels["Vera Lind"] == "Entity;Person"
    assert labels["Skarn Lighthouse"] == "Entity;HistoricBuilding"  # a label Cypher reads without quotes
    assert labels["Joseph Okafor"] == "Entity"  # an imported entity has no type
    with rels_csv.open(encoding="utf-8") as handle:
        rels = list(csv.DictReader(handle))
    kept = next(r for r in rels if r["predicate"] == "kept" and r[":TYPE"] == "OPENREL")
    assert kept["relation_type"] == "Occupation"
    assert all(r["relation_type"] == "" for r in rels if r["predicate"] == "trained")
