"""Export of the graph: GraphML, JSON Lines, and Neo4j bulk-import CSV (neo4j-admin database import).

Typed triplets (ToG-3 §3.2.1: type_s, type_p, type_o) travel in every format: an entity's type is
its ``type`` property (GraphML attribute ``entity_type``, a second Neo4j label), a triplet node and
its OPENREL edge carry ``subject_type``, ``relation_type`` and ``object_type`` (the Neo4j
relationships also in a ``relation_type`` column)."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from thinkgraph.errors import InputError, UsageError
from thinkgraph.models import NodeType

if TYPE_CHECKING:
    from thinkgraph.store.base import GraphStore

FORMATS = ("graphml", "jsonl", "neo4j")
_GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"


def export_graph(store: GraphStore, fmt: str, out: str | Path) -> list[Path]:
    """Write the graph as ``fmt``: graphml and jsonl to a file, neo4j to a folder of CSV files."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    target = Path(out)
    if fmt == "neo4j" and target.exists() and not target.is_dir():
        raise InputError(f"{target} is a file; neo4j export writes a folder of CSV files")
    if fmt != "neo4j" and target.is_dir():
        raise InputError(f"{target} is a folder; {fmt} export writes one file (give a file name)")
    if fmt == "graphml":
        return [_graphml(store, target)]
    if fmt == "jsonl":
        return [_jsonl(store, target)]
    return _neo4j(store, target)


_GRAPHML_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}
LABEL_CHARS = 60  # Gephi and yEd draw `label`; the full text is in `text`


def _attr_type(value: Any) -> str:
    return _GRAPHML_TYPES.get(type(value), "string")  # lists and objects are written as JSON text


def _attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False) \
        if isinstance(value, list | dict) else str(value)


# Properties named like a fixed GraphML attribute: a node's ``type`` property is its entity type.
_RENAMED = {"type": "entity_type"}


def _prop_keys(items: Iterable[dict[str, Any]], reserved: set[str]) -> dict[str, tuple[str, str]]:
    """Property name -> (GraphML key name, type); a property whose values differ in type is a string."""
    types: dict[str, str] = {}
    for props in items:
        for name, value in props.items():
            if value is None:
                continue
            kind = _attr_type(value)
            seen = types.setdefault(name, kind)
            if seen != kind:
                types[name] = "double" if {seen, kind} == {"long", "double"} else "string"
    return {name: (_RENAMED.get(name, f"prop_{name}") if name in reserved else name, kind)
            for name, kind in types.items()}


def _graphml(store: GraphStore, path: Path) -> Path:
    """Nodes and edges with a `label` (what graph tools draw), their type, and each property as its
    own typed attribute (numbers stay numbers), so that Gephi and yEd can size, colour and filter."""
    ET.register_namespace("", _GRAPHML_NS)
    ns = f"{{{_GRAPHML_NS}}}"
    root = ET.Element(f"{ns}graphml")
    fixed = {"node": [("label", "string"), ("type", "string"), ("text", "string")],
             "edge": [("label", "string"), ("type", "string"), ("weight", "double")]}
    props = {"node": _prop_keys((n.props for n in store.iter_nodes()), {k for k, _ in fixed["node"]}),
             "edge": _prop_keys((e.props for e in store.iter_edges()), {k for k, _ in fixed["edge"]})}
    for domain in ("node", "edge"):
        for name, kind in [*fixed[domain], *props[domain].values()]:
            ET.SubElement(root, f"{ns}key", id=f"{domain[0]}_{name}",
                          attrib={"for": domain, "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, f"{ns}graph", id="thinkgraph", edgedefault="directed")

    def data(el: ET.Element, domain: str, values: dict[str, Any], extra: dict[str, Any]) -> None:
        for name, value in values.items():
            ET.SubElement(el, f"{ns}data", key=f"{domain[0]}_{name}").text = _attr_text(value)
        for name, value in extra.items():
            if value is not None and name in props[domain]:
                ET.SubElement(el, f"{ns}data", key=f"{domain[0]}_{props[domain][name][0]}").text = _attr_text(value)

    for node in store.iter_nodes():
        el = ET.SubElement(graph, f"{ns}node", id=node.id)
        label = " ".join(node.text.split())[:LABEL_CHARS]
        data(el, "node", {"label": label, "type": node.type, "text": node.text}, node.props)
    for i, edge in enumerate(store.iter_edges()):
        el = ET.SubElement(graph, f"{ns}edge", id=f"e{i}", source=edge.src, target=edge.dst)
        label = str(edge.props.get("predicate") or edge.type)
        data(el, "edge", {"label": label, "type": edge.type, "weight": edge.weight}, edge.props)
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
            typed = _type_label(node.props) if node.type == NodeType.ENTITY else ""
            labels = ";".join(dict.fromkeys(x for x in (node.type.capitalize(), typed) if x))
            writer.writerow([node.id, labels, node.text, json.dumps(node.props, ensure_ascii=False)])
    with rels_csv.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([":START_ID", ":END_ID", ":TYPE", "weight:float", "predicate", "relation_type", "props"])
        for edge in store.iter_edges():
            writer.writerow([edge.src, edge.dst, edge.type, edge.weight, edge.props.get("predicate", ""),
                             edge.props.get("relation_type", ""), json.dumps(edge.props, ensure_ascii=False)])
    script = folder / "import.sh"
    script.write_text("#!/bin/sh\n# Load into an empty Neo4j database named 'thinkgraph'.\n"
                      "neo4j-admin database import full --nodes=nodes.csv --relationships=relationships.csv "
                      "--multiline-fields=true thinkgraph\n", encoding="utf-8")
    return [nodes_csv, rels_csv, script]


def _type_label(props: dict[str, Any]) -> str:
    """A node's entity type as a Neo4j label ("scientific theory" -> "ScientificTheory"): its words
    capitalised and joined, so that Cypher needs no quoting; "" when it has none."""
    words = re.findall(r"[^\W_]+", str(props.get("type") or ""))
    label = "".join(w[:1].upper() + w[1:] for w in words)
    return label if label[:1].isalpha() else ""
