"""Export of the graph: GraphML, JSON Lines, and Neo4j bulk-import CSV (neo4j-admin database import)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from thinkgraph.errors import InputError

if TYPE_CHECKING:
    from thinkgraph.store.base import GraphStore

FORMATS = ("graphml", "jsonl", "neo4j")
_GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"


def export_graph(store: GraphStore, fmt: str, out: str | Path) -> list[Path]:
    target = Path(out)
    if fmt == "graphml":
        return [_graphml(store, target)]
    if fmt == "jsonl":
        return [_jsonl(store, target)]
    if fmt == "neo4j":
        return _neo4j(store, target)
    raise InputError(f"unknown export format {fmt!r}; valid formats: {', '.join(FORMATS)}")


def _graphml(store: GraphStore, path: Path) -> Path:
    ET.register_namespace("", _GRAPHML_NS)
    root = ET.Element(f"{{{_GRAPHML_NS}}}graphml")
    keys = [("node", "type"), ("node", "text"), ("node", "props"),
            ("edge", "type"), ("edge", "weight"), ("edge", "props")]
    for domain, name in keys:
        ET.SubElement(root, f"{{{_GRAPHML_NS}}}key", id=f"{domain[0]}_{name}", attrib={
            "for": domain, "attr.name": name, "attr.type": "double" if name == "weight" else "string"})
    graph = ET.SubElement(root, f"{{{_GRAPHML_NS}}}graph", id="thinkgraph", edgedefault="directed")
    for node in store.iter_nodes():
        el = ET.SubElement(graph, f"{{{_GRAPHML_NS}}}node", id=node.id)
        for name, value in (("type", node.type), ("text", node.text), ("props", json.dumps(node.props))):
            ET.SubElement(el, f"{{{_GRAPHML_NS}}}data", key=f"n_{name}").text = str(value)
    for i, edge in enumerate(store.iter_edges()):
        el = ET.SubElement(graph, f"{{{_GRAPHML_NS}}}edge", id=f"e{i}", source=edge.src, target=edge.dst)
        for name, value in (("type", edge.type), ("weight", edge.weight), ("props", json.dumps(edge.props))):
            ET.SubElement(el, f"{{{_GRAPHML_NS}}}data", key=f"e_{name}").text = str(value)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


def _jsonl(store: GraphStore, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for node in store.iter_nodes():
            handle.write(json.dumps({"kind": "node", "id": node.id, "type": node.type, "text": node.text,
                                     "props": node.props,
                                     "provenance": sorted({p.doc_id for p in store.provenance(node.id)})},
                                    ensure_ascii=False) + "\n")
        for edge in store.iter_edges():
            handle.write(json.dumps({"kind": "edge", "src": edge.src, "dst": edge.dst, "type": edge.type,
                                     "weight": edge.weight, "props": edge.props}, ensure_ascii=False) + "\n")
    return path


def _neo4j(store: GraphStore, folder: Path) -> list[Path]:
    """nodes.csv and relationships.csv with neo4j-admin import headers, plus an import command."""
    folder.mkdir(parents=True, exist_ok=True)
    nodes_csv, rels_csv = folder / "nodes.csv", folder / "relationships.csv"
    with nodes_csv.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id:ID", ":LABEL", "text", "props"])
        for node in store.iter_nodes():
            writer.writerow([node.id, node.type.capitalize(), node.text, json.dumps(node.props, ensure_ascii=False)])
    with rels_csv.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([":START_ID", ":END_ID", ":TYPE", "weight:float", "predicate", "props"])
        for edge in store.iter_edges():
            writer.writerow([edge.src, edge.dst, edge.type, edge.weight, edge.props.get("predicate", ""),
                             json.dumps(edge.props, ensure_ascii=False)])
    script = folder / "import.sh"
    script.write_text("#!/bin/sh\n# Load into an empty Neo4j database named 'thinkgraph'.\n"
                      "neo4j-admin database import full --nodes=nodes.csv --relationships=relationships.csv "
                      "--multiline-fields=true thinkgraph\n", encoding="utf-8")
    return [nodes_csv, rels_csv, script]
