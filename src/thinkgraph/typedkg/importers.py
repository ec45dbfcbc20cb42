"""Typed graphs from GRBench ``graph.json``, from typed triple files, and from a corpus-built index.

GRBench: ``{"<type>_nodes": {"<id>": {"features": {...}, "neighbors": {"<edge type>": [ids]}}}}``,
read as a stream (ijson) so that a multi-gigabyte file is never held in memory as Python objects."""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson

from thinkgraph.errors import InputError
from thinkgraph.models import EdgeType, NodeType
from thinkgraph.store.base import GraphStore
from thinkgraph.typedkg.builder import TypedGraphBuilder

log = logging.getLogger(__name__)
NODES_SUFFIX = "_nodes"
NODES_PREFIX = "nodes"  # the one prefix every top-level map is read under
PER_NODE_BYTES = 256_000_000


def load_grbench(path: str | Path, builder: TypedGraphBuilder, *, per_node: bool | None = None) -> int:
    """Stream GRBench nodes into the builder; returns the nodes read. A malformed node record is
    skipped and counted (``builder.skipped``); malformed JSON is an error naming the file.

    ``per_node`` (default: for files over PER_NODE_BYTES) holds one node at a time in memory instead
    of one ``<type>_nodes`` map: a third of the peak memory for twice the parse time (the renaming
    of parse events runs in Python)."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"graph file not found: {file}")
    if per_node is None:
        per_node = file.stat().st_size > PER_NODE_BYTES
    read = 0
    section: list[str] = [""]  # the top-level key whose map is being read
    try:
        with file.open("rb") as stream:
            if not per_node:
                for key, nodes in ijson.kvitems(stream, "", use_float=True):
                    section[0] = key
                    if not key.endswith(NODES_SUFFIX) or not isinstance(nodes, dict):
                        section.append(key)
                        continue
                    read += _add_nodes(builder, key[: -len(NODES_SUFFIX)], nodes)
                return _warn_unknown(file, section, read)
            for node_id, record in ijson.kvitems(_under_one_prefix(ijson.parse(stream, use_float=True), section),
                                                 NODES_PREFIX):
                key = section[0]
                if not key.endswith(NODES_SUFFIX):
                    builder.skipped += 1
                    continue
                read += _add_nodes(builder, key[: -len(NODES_SUFFIX)], {node_id: record})
    except ijson.JSONError as exc:
        raise InputError(f"{file}: malformed JSON ({exc})") from exc
    return _warn_unknown(file, section, read)


def _warn_unknown(file: Path, section: list[str], read: int) -> int:
    for key in section[1:]:
        log.warning("%s: top-level key %r is not a '<type>_nodes' map; skipped", file, key)
    return read


def _under_one_prefix(events: Iterator[tuple[str, str, Any]], section: list[str]) -> Iterator[tuple[str, str, Any]]:
    """Parse events with every top-level key's prefix renamed to one shared prefix, so that one
    streaming ``kvitems`` yields the nodes of every ``<type>_nodes`` map one at a time (a top-level
    ``kvitems`` would first build each whole map in memory). ``section[0]`` names the current key;
    keys that are not ``<type>_nodes`` are appended after it for the warning."""
    cut = 0
    for prefix, event, value in events:
        if not prefix:
            if event == "map_key":
                section[0] = value
                cut = len(value)
                if not value.endswith(NODES_SUFFIX):
                    section.append(value)
            yield prefix, event, value
        elif cut and prefix.startswith(section[0]):
            yield NODES_PREFIX + prefix[cut:], event, value
        else:
            yield prefix, event, value


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
