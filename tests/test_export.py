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
