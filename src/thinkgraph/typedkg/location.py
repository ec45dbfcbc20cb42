"""Where an index keeps its typed graph (a directory beside the SQLite file), and building it from
the corpus-built graph when none was imported (rebuilt when the index has changed since)."""

from __future__ import annotations

import json
from pathlib import Path

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import ConfigError
from thinkgraph.store.base import GraphStore
from thinkgraph.typedkg import layout
from thinkgraph.typedkg.builder import TypedGraphBuilder
from thinkgraph.typedkg.graph import TypedGraph
from thinkgraph.typedkg.importers import load_from_index

SOURCE_META = "source"


def typed_graph_path(index_path: str | Path) -> Path:
    return Path(f"{index_path}.kg")


def _fingerprint(store: GraphStore) -> str:
    return json.dumps([store.count_nodes(), store.count_edges()], sort_keys=True)


def open_typed_graph(store: GraphStore, index_path: str | Path, embedder: Embedder) -> TypedGraph:
    """The imported typed graph if there is one; otherwise the corpus-built index as a typed graph."""
    path = typed_graph_path(index_path)
    meta_file = path / layout.META
    if meta_file.is_file():
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        source = meta.get(SOURCE_META, {})
        if source.get("kind") != "index":  # an imported graph (either format) is read as it is
            return TypedGraph(path, embedder)
        if source.get("fingerprint") == _fingerprint(store) and meta.get("version") == layout.FORMAT_VERSION:
            return TypedGraph(path, embedder)  # (an older format built from the index is rebuilt)
    if not store.count_nodes().get("entity"):
        raise ConfigError("this index has no graph for kgr: import one with `thinkgraph index --kg graph.json` "
                          "or index documents with an extractor that finds entities")
    builder = TypedGraphBuilder()
    load_from_index(store, builder)
    builder.write(path, embedder, extra_meta={SOURCE_META: {"kind": "index", "fingerprint": _fingerprint(store)}})
    return TypedGraph(path, embedder)
