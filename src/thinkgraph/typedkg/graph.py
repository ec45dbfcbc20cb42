"""A typed graph opened from its directory: every array is memory-mapped, so opening costs
milliseconds and resident memory grows only with what actions touch."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import IndexFileError, InputError
from thinkgraph.npyfiles import load_npy
from thinkgraph.typedkg import layout
from thinkgraph.typedkg.adjacency import open_adjacency
from thinkgraph.typedkg.describe import GraphDescription, describe_schema, listed
from thinkgraph.typedkg.vectors import NodeVectors


@dataclass(frozen=True, slots=True)
class NodeHit:
    node: int
    ext_id: str
    text: str
    score: float


class TypedGraph:
    def __init__(self, directory: str | Path, embedder: Embedder | None = None) -> None:
        self.path = Path(directory)
        meta_path = self.path / layout.META
        if not meta_path.is_file():
            raise IndexFileError(f"no typed graph at {self.path} (build one with `thinkgraph index --kg`)")
        self.meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
        if self.meta.get("version") not in layout.READABLE_VERSIONS:
            raise IndexFileError(f"{self.path}: typed-graph format {self.meta.get('version')} is not supported")
        self.node_count: int = self.meta["nodes"]
        self.node_type_names: list[str] = self.meta["node_types"]
        self.edge_type_names: list[str] = self.meta["edge_types"]
        self._edge_index = {name: k for k, name in enumerate(self.edge_type_names)}
        load = self._load
        self._types = load(layout.NODE_TYPES)
        self._ids, self._ids_off = self._blob(layout.IDS), load(layout.IDS_OFFSETS)
        self._texts, self._texts_off = self._blob(layout.TEXTS), load(layout.TEXTS_OFFSETS)
        self._features = self._blob(layout.FEATURES)
        self._f_start, self._f_end = load(layout.FEATURES_START), load(layout.FEATURES_END)
        self._hashes, self._order = load(layout.ID_HASHES), load(layout.ID_ORDER)
        self._adjacency = open_adjacency(self.meta["version"], load, len(self.edge_type_names))
        self._embedder = embedder

    def _load(self, name: str) -> np.ndarray:
        return load_npy(self.path / name, mmap_mode="r")

    def _blob(self, name: str) -> np.ndarray:
        file = self.path / name
        if file.stat().st_size == 0:
            return np.zeros(0, dtype=np.uint8)
        return np.memmap(file, dtype=np.uint8, mode="r")

    # identity ---------------------------------------------------------------------
    def ext_id(self, node: int) -> str:
        return bytes(self._ids[self._ids_off[node]:self._ids_off[node + 1]]).decode()

    def text(self, node: int) -> str:
        return bytes(self._texts[self._texts_off[node]:self._texts_off[node + 1]]).decode()

    def node_type(self, node: int) -> str:
        return self.node_type_names[int(self._types[node])]

    def lookup(self, ext_id: str) -> int | None:
        """The integer id of an external id, or None."""
        h = layout.id_hash(ext_id)
        at = int(np.searchsorted(self._hashes, h))
        while at < len(self._hashes) and int(self._hashes[at]) == h:
            node = int(self._order[at])
            if self.ext_id(node) == ext_id:
                return node
            at += 1
        return None

    def resolve(self, ref: str) -> int:
        """An external id (or, failing that, an integer id as text) to a node; unknown ids raise."""
        ref = ref.strip().strip("'\"")
        node = self.lookup(ref)
        if node is None and ref.isdigit() and int(ref) < self.node_count:
            node = int(ref)
        if node is None:
            raise InputError(f"there is no node {ref!r} in the graph")
        return node

    # content ----------------------------------------------------------------------
    def features(self, node: int) -> dict[str, Any]:
        start, end = int(self._f_start[node]), int(self._f_end[node])
        return json.loads(bytes(self._features[start:end])) if end > start else {}

    def edge_type(self, name: str) -> int:
        k = self._edge_index.get(name.strip().strip("'\""))
        if k is None:
            raise InputError(f"unknown edge type {name!r}; edge types: {listed(self.edge_type_names)}")
        return k

    def has_edge_type(self, name: str) -> bool:
        return name.strip().strip("'\"") in self._edge_index

    def neighbors(self, node: int, edge_type: str) -> np.ndarray:
        return self._adjacency.neighbors(node, self.edge_type(edge_type))

    def degree(self, node: int, edge_type: str) -> int:
        return len(self.neighbors(node, edge_type))

    def edge_types_of(self, node: int) -> list[str]:
        """Edge types along which ``node`` has at least one neighbour (in edge-type order)."""
        kinds, _ = self._adjacency.types_of(node)
        return [self.edge_type_names[int(k)] for k in kinds]

    def edge_type_degrees(self, node: int) -> list[tuple[str, int]]:
        """The edge types of ``node`` with its neighbours along each, most neighbours first."""
        kinds, counts = self._adjacency.types_of(node)
        order = np.argsort(-counts, kind="stable")
        return [(self.edge_type_names[int(kinds[i])], int(counts[i])) for i in order]

    # search -----------------------------------------------------------------------
    @cached_property
    def _vectors(self) -> NodeVectors:
        if self._embedder is None or not (self.path / layout.VECTORS).exists():
            raise IndexFileError(f"{self.path} has no vector index over node texts")
        recorded = (self.meta.get("embedding") or {}).get("model")
        if recorded and recorded != self._embedder.name:
            raise IndexFileError(f"{self.path} was embedded with {recorded}, not {self._embedder.name}")
        return NodeVectors(self.path / layout.VECTORS, self._embedder)

    def search(self, text: str, k: int = 1) -> list[NodeHit]:
        return [NodeHit(i, self.ext_id(i), self.text(i), score) for i, score in self._vectors.search(text, k)]

    def description(self, max_chars: int | None = None) -> GraphDescription:
        """The graph definition shown to the model: each node type with its features, and each edge
        type with the node types it joins; above ``max_chars``, the most frequent types with their
        counts and how many were left out (typedkg/describe.py)."""
        return describe_schema(self.meta.get("schema", {}), self.meta.get("edges", {}), self._node_type_counts,
                               max_chars)

    def describe(self, max_chars: int | None = None) -> str:
        return self.description(max_chars).text

    def _node_type_counts(self) -> dict[str, int]:
        counts = np.bincount(np.asarray(self._types), minlength=len(self.node_type_names))
        return {name: int(c) for name, c in zip(self.node_type_names, counts, strict=False)}
