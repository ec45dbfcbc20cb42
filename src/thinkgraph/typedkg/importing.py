"""Importing a typed knowledge graph (GRBench graph.json, or typed triples TSV/CSV) as an index's
typed graph, with a vector index over node texts; an import replaces an earlier one."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import ConfigError, InputError
from thinkgraph.typedkg.builder import TypedGraphBuilder
from thinkgraph.typedkg.importers import load_grbench, load_typed_triples
from thinkgraph.typedkg.location import SOURCE_META, typed_graph_path

GRAPH_FORMATS = ("grbench", "triples")


@dataclass(frozen=True, slots=True)
class KGImportReport:
    path: str
    nodes: int
    edges: int
    skipped: int
    seconds: float


def import_typed_graph(index_path: str | Path, embedder: Embedder, source: str | Path, *,
                       kind: str = "auto") -> KGImportReport:
    """``kind``: grbench, triples, or auto (grbench for a .json file)."""
    started = time.perf_counter()
    file = Path(source)
    if kind == "auto":
        kind = "grbench" if file.suffix.lower() == ".json" else "triples"
    if kind not in GRAPH_FORMATS:
        raise ConfigError(f"unknown graph format {kind!r}; valid: {', '.join(GRAPH_FORMATS)}")
    builder = TypedGraphBuilder()
    (load_grbench if kind == "grbench" else load_typed_triples)(file, builder)
    if builder.node_count == 0:
        raise InputError(f"{file}: no nodes found")
    written = builder.write(typed_graph_path(index_path), embedder,
                            extra_meta={SOURCE_META: {"kind": kind, "file": str(file)}})
    meta = json.loads((written / "meta.json").read_text(encoding="utf-8"))
    return KGImportReport(str(written), meta["nodes"], sum(meta["edges"].values()), builder.skipped,
                          time.perf_counter() - started)
