"""Typed graphs from GRBench ``graph.json``, from typed triple files, and from a corpus-built index.

GRBench: ``{"<type>_nodes": {"<id>": {"features": {...}, "neighbors": {"<edge type>": [ids]}}}}``,
read as a stream (ijson) so that a multi-gigabyte file is never held in memory as Python objects."""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import ijson

from thinkgraph.errors import InputError
from thinkgraph.models import EdgeType, NodeType
from thinkgraph.store.base import GraphStore
from thinkgraph.typedkg.builder import TypedGraphBuilder

log = logging.getLogger(__name__)
NODES_SUFFIX = "_nodes"


def load_grbench(path: str | Path, builder: TypedGraphBuilder) -> int:
    """Stream GRBench nodes into the builder; returns the nodes read. A malformed node record is
    skipped and counted (``builder.skipped``); malformed JSON is an error naming the file."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"graph file not found: {file}")
    read = 0
    try:
        with file.open("rb") as stream:
            for key, nodes in ijson.kvitems(stream, "", use_float=True):
                if not key.endswith(NODES_SUFFIX):
                    log.warning("%s: top-level key %r is not '<type>_nodes'; skipped", file, key)
                    continue
                node_type = key[: -len(NODES_SUFFIX)]
                if not isinstance(nodes, dict):
                    raise InputError(f"{file}: {key} must map node ids to records")
                read += _add_nodes(builder, node_type, nodes)
    except ijson.JSONError as exc:
        raise InputError(f"{file}: malformed JSON ({exc})") from exc
    return read


def _add_nodes(builder: TypedGraphBuilder, node_type: str, nodes: dict) -> int:
    read = 0
    for ext_id, record in nodes.items():
        if not isinstance(record, dict) or not isinstance(record.get("features", {}), dict) \
                or not isinstance(record.get("neighbors", {}), dict):
            builder.skipped += 1
            log.warning("node %s (%s): record is not {features, neighbors}; skipped", ext_id, node_type)
            continue
        i = builder.add_node(str(ext_id), node_type, record.get("features") or {})
        for edge_type, targets in (record.get("neighbors") or {}).items():
            if isinstance(targets, list):
                builder.add_edges(i, str(edge_type), [str(t) for t in targets])
        read += 1
    return read


def load_typed_triples(path: str | Path, builder: TypedGraphBuilder) -> int:
    """TSV/CSV rows ``head, relation, tail[, head type, tail type]``; heads and tails become nodes
    named by themselves. Returns the triples read; short rows are skipped and counted."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"triples file not found: {file}")
    dialect = "excel-tab" if file.suffix.lower() in (".tsv", ".txt") else "excel"
    read = 0
    with file.open(encoding="utf-8", newline="") as stream:
        for row in csv.reader(stream, dialect=dialect):
            cells = [c.strip() for c in row]
            if len(cells) < 3 or not all(cells[:3]):
                builder.skipped += 1
                continue
            head, relation, tail = cells[:3]
            for name, typ in ((head, cells[3] if len(cells) > 3 else ""), (tail, cells[4] if len(cells) > 4 else "")):
                if typ or name not in builder._index:  # noqa: SLF001 - typing an already-typed node is a no-op
                    builder.add_node(name, typ or "entity", {"name": name})
            builder.add_edge(head, relation, tail)
            read += 1
    return read


def load_from_index(store: GraphStore, builder: TypedGraphBuilder) -> int:
    """A corpus-built index as a typed graph: entities (features name, description; typed by their
    extracted type), passages (features title, text, doc_id), predicates as edge types in both
    directions (the inverse suffixed ``~``), co-occurrence, and entity <-> passage mentions, so that an
    agent can read the source text and answers can cite it. Returns the nodes added."""
    count = 0
    for node in store.iter_nodes(NodeType.ENTITY):
        features = {"name": node.text, **{k: v for k, v in node.props.items() if k != "type" and v}}
        builder.add_node(node.id, str(node.props.get("type") or "entity"), features)
        count += 1
    for node in store.iter_nodes(NodeType.CHUNK):
        title = str(node.props.get("title") or "")
        builder.add_node(node.id, "passage", {"title": f"{title}: {node.text[:120]}" if title else node.text[:160],
                                              "text": node.text, "doc_id": node.props.get("doc_id", "")})
        count += 1
    for edge in store.iter_edges([EdgeType.OPENREL, EdgeType.CO_OCCURS, EdgeType.CONTAINS]):
        if edge.type == EdgeType.CONTAINS:
            forward, backward = "mentions", "mentioned_in"
        elif edge.type == EdgeType.CO_OCCURS:
            forward = backward = "co_occurs_with"
        else:
            forward = str(edge.props.get("predicate") or "related_to")
            backward = forward + "~"
        builder.add_edge(edge.src, forward, edge.dst)
        builder.add_edge(edge.dst, backward, edge.src)
    return count
