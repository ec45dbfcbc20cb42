"""Typed graphs from GRBench ``graph.json``, from typed triple files, and from a corpus-built index.

GRBench: ``{"<type>_nodes": {"<id>": {"features": {...}, "neighbors": {"<edge type>": [ids]}}}}``,
read as a stream (ijson) so that a multi-gigabyte file is never held in memory as Python objects."""

from __future__ import annotations

import csv
import logging
import mmap
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson

from thinkgraph.errors import InputError
from thinkgraph.models import EdgeType, NodeType
from thinkgraph.store.base import GraphStore
from thinkgraph.typedkg.builder import TypedGraphBuilder
from thinkgraph.typedkg.describe import INVERSE_SUFFIX

log = logging.getLogger(__name__)
NODES_SUFFIX = "_nodes"
NODES_PREFIX = "nodes"  # the one prefix every top-level map is read under
PER_NODE_BYTES = 256_000_000


def load_grbench(path: str | Path, builder: TypedGraphBuilder, *, per_node: bool | None = None) -> int:
    """Stream GRBench nodes into the builder; returns the nodes read. A malformed node record is
    skipped and counted (``builder.skipped``); malformed JSON is an error naming the file.

    A file laid out as GRBench writes it (only ``<type>_nodes`` maps at the top) is cut into its
    maps by one regex scan and each map streamed node by node by ijson's C parser. Other layouts:
    ``per_node`` (default: for files over PER_NODE_BYTES) holds one node at a time in memory instead
    of one ``<type>_nodes`` map: a third of the peak memory for twice the parse time (the renaming
    of parse events runs in Python); ``per_node=False`` reads map by map."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"graph file not found: {file}")
    read = 0
    section: list[str] = [""]  # the top-level key whose map is being read
    if per_node is not False:  # the plain GRBench layout streams fastest, whatever the size
        segmented = _load_segments(file, builder)
        if segmented is not None:
            return segmented
    if per_node is None:
        per_node = file.stat().st_size > PER_NODE_BYTES
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


_NODES_KEY = re.compile(rb'(?<!\\)"([^"\\]{1,200}' + NODES_SUFFIX.encode() + rb')"\s*:\s*\{')
_SPACE = b" \t\r\n"


class _ByteRange:
    """A read-only file-like view of ``[start, end)`` of a file, for ijson."""

    def __init__(self, stream: Any, start: int, end: int) -> None:
        self.stream, self.left = stream, end - start
        stream.seek(start)

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data: bytes = self.stream.read(size)
        self.left -= len(data)
        return data


def _back(view: mmap.mmap, pos: int, expect: bytes) -> int | None:
    """Position of ``expect`` just before ``pos`` (whitespace skipped), or None."""
    pos -= 1
    while pos >= 0 and view[pos] in _SPACE:
        pos -= 1
    return pos if pos >= 0 and view[pos:pos + 1] == expect else None


def _segments(file: Path) -> list[tuple[str, int, int]] | None:
    """Byte ranges of the ``<type>_nodes`` maps when the file is exactly ``{"a_nodes": {...},
    "b_nodes": {...}}`` (GRBench's layout), found by one regex scan; None otherwise."""
    if file.stat().st_size == 0:
        return None
    with file.open("rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as view:
        keys = [(m.group(1).decode(), m.start(), m.end() - 1) for m in _NODES_KEY.finditer(view)]
        if not keys or _back(view, keys[0][1], b"{") != 0:
            return None
        close = _back(view, len(view), b"}")
        ends = [_back(view, start, b",") for _, start, _ in keys[1:]] + [close]
        out = []
        for (key, _, brace), end in zip(keys, ends, strict=True):
            last = _back(view, end, b"}") if end is not None else None
            if last is None:
                return None
            out.append((key, brace, last + 1))
        return out


def _load_segments(file: Path, builder: TypedGraphBuilder) -> int | None:
    """Each ``<type>_nodes`` map streamed node by node with ijson's C parser (one pass, one node in
    memory at a time). None (builder untouched) when the layout is not plain GRBench; a segment
    that does not parse (a nested key looked like a top-level one) also falls back, after the
    builder is cleared."""
    segments = _segments(file)
    if segments is None:
        return None
    read = 0
    try:
        with file.open("rb") as stream:
            for key, start, end in segments:
                node_type = key[: -len(NODES_SUFFIX)]
                for node_id, record in ijson.kvitems(_ByteRange(stream, start, end), "", use_float=True):
                    read += _add_nodes(builder, node_type, {node_id: record})
    except ijson.JSONError:
        builder.clear()
        return None
    return read


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


def _add_nodes(builder: TypedGraphBuilder, node_type: str, nodes: dict[str, Any]) -> int:
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
            backward = forward + INVERSE_SUFFIX
        builder.add_edge(edge.src, forward, edge.dst)
        builder.add_edge(edge.dst, backward, edge.src)
    return count
