"""Accumulates typed nodes and edges with compact integer ids and writes a typed-graph directory.
Memory during a build is about one Python dict entry per node id plus 8 bytes per edge; the written
graph is opened memory-mapped by :class:`TypedGraph`."""

from __future__ import annotations

import json
import logging
import shutil
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from thinkgraph.embed.base import Embedder
from thinkgraph.typedkg import layout
from thinkgraph.typedkg.adjacency import write_edges
from thinkgraph.typedkg.vectors import build_vector_index

log = logging.getLogger(__name__)
DEFAULT_TEXT_FIELDS = ("name", "title")  # the feature that names a node (GRBench: name / title)
UNKNOWN_TYPE = "unknown"  # a node referenced as a neighbour but never described


class TypedGraphBuilder:
    def __init__(self, text_fields: Sequence[str] = DEFAULT_TEXT_FIELDS) -> None:
        self.text_fields = tuple(text_fields)
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        self._types: array[int] = array("H")
        self._type_names: dict[str, int] = {UNKNOWN_TYPE: 0}
        self._edge_names: dict[str, int] = {}
        self._src: list[array[int]] = []
        self._dst: list[array[int]] = []
        self._features: bytearray = bytearray()
        # one slot per node (arrays and a list, not dicts: a third of the memory at a million nodes)
        self._feature_start: array[int] = array("q")
        self._feature_end: array[int] = array("q")
        self._texts: list[str | None] = []
        self._feature_keys: dict[int, set[str]] = {}
        self.skipped = 0

    def clear(self) -> None:
        """Forget everything added (a reader that must start over)."""
        self.__init__(self.text_fields)  # type: ignore[misc]

    @property
    def node_count(self) -> int:
        return len(self._ids)

    def node(self, ext_id: str) -> int:
        """The integer id of ``ext_id``, created (type unknown) when first seen."""
        found = self._index.get(ext_id)
        if found is None:
            found = self._index[ext_id] = len(self._ids)
            self._ids.append(ext_id)
            self._types.append(0)
            self._feature_start.append(0)
            self._feature_end.append(0)
            self._texts.append(None)
        return found

    def add_node(self, ext_id: str, node_type: str, features: dict[str, Any] | None = None) -> int:
        i = self.node(ext_id)
        t = self._types[i] = self._type_names.setdefault(node_type, len(self._type_names))
        features = features or {}
        self._feature_keys.setdefault(t, set()).update(features)
        blob = json.dumps(features, ensure_ascii=False, separators=(",", ":")).encode()
        self._feature_start[i] = len(self._features)
        self._features += blob
        self._feature_end[i] = len(self._features)
        text = next((str(features[f]) for f in self.text_fields if features.get(f) not in (None, "")), "")
        if text:
            self._texts[i] = text
        return i

    def add_edge(self, src: str | int, edge_type: str, dst: str | int) -> None:
        s = src if isinstance(src, int) else self.node(src)
        d = dst if isinstance(dst, int) else self.node(dst)
        k = self._edge_names.get(edge_type)
        if k is None:
            k = self._edge_names[edge_type] = len(self._edge_names)
            self._src.append(array("i"))
            self._dst.append(array("i"))
        self._src[k].append(s)
        self._dst[k].append(d)

    def add_edges(self, src: int, edge_type: str, dsts: Sequence[str]) -> None:
        """Many neighbours of one node at once (the fast path for GRBench neighbour lists)."""
        k = self._edge_names.get(edge_type)
        if k is None:
            k = self._edge_names[edge_type] = len(self._edge_names)
            self._src.append(array("i"))
            self._dst.append(array("i"))
        node = self.node
        self._dst[k].extend(map(node, dsts))
        self._src[k].extend([src] * len(dsts))

    def write(self, directory: str | Path, embedder: Embedder | None = None, *,
              progress: Callable[[str], None] | None = None, extra_meta: dict[str, Any] | None = None) -> Path:
        """Write the graph (replacing ``directory``); with an embedder, also the node-text vector index."""
        say = progress or (lambda stage: log.info("typed graph: %s", stage))
        out = Path(directory)
        tmp = out.with_name(out.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        n = self.node_count
        say(f"{n} nodes, {sum(len(a) for a in self._src)} edges: writing ids and features")
        np.save(tmp / layout.NODE_TYPES, np.frombuffer(self._types, dtype=np.uint16))
        self._write_strings(tmp / layout.IDS, tmp / layout.IDS_OFFSETS, self._ids)
        texts = [t or ext for t, ext in zip(self._texts, self._ids, strict=True)]
        self._write_strings(tmp / layout.TEXTS, tmp / layout.TEXTS_OFFSETS, texts)
        (tmp / layout.FEATURES).write_bytes(bytes(self._features))
        np.save(tmp / layout.FEATURES_START, np.frombuffer(self._feature_start, dtype=np.int64))
        np.save(tmp / layout.FEATURES_END, np.frombuffer(self._feature_end, dtype=np.int64))
        hashes = np.fromiter((layout.id_hash(x) for x in self._ids), dtype=np.int64, count=n)
        order = np.argsort(hashes, kind="stable")
        np.save(tmp / layout.ID_HASHES, hashes[order])
        np.save(tmp / layout.ID_ORDER, order.astype(np.int32 if n < 2**31 else np.int64))
        say(f"adjacency (one CSR over {len(self._edge_names)} edge types)")
        write_edges(tmp, n, [np.frombuffer(a, dtype=np.int32) for a in self._src],
                    [np.frombuffer(a, dtype=np.int32) for a in self._dst])
        embedding = None
        if embedder is not None:
            say(f"vector index over {n} node texts ({embedder.name})")
            build_vector_index(tmp / layout.VECTORS, embedder, texts)
            embedding = {"model": embedder.name, "dim": embedder.dim}
        meta = {"version": layout.FORMAT_VERSION, "nodes": n, "node_types": list(self._type_names),
                "edge_types": list(self._edge_names), "text_fields": list(self.text_fields),
                "embedding": embedding, "edges": {name: len(self._src[k]) for name, k in self._edge_names.items()},
                "schema": self._schema(), **(extra_meta or {})}
        (tmp / layout.META).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)  # a crash mid-write never leaves a half graph under the final name
        return out

    def _schema(self) -> dict[str, Any]:
        """Per node type its feature names, per edge type the node types it joins (for the prompt)."""
        names = list(self._type_names)
        types = np.frombuffer(self._types, dtype=np.uint16)
        edges = {}
        for name, k in self._edge_names.items():
            src = np.unique(types[np.frombuffer(self._src[k], dtype=np.int32)])
            dst = np.unique(types[np.frombuffer(self._dst[k], dtype=np.int32)])
            edges[name] = {"from": [names[t] for t in src], "to": [names[t] for t in dst]}
        return {"features": {names[t]: sorted(keys) for t, keys in self._feature_keys.items()}, "edges": edges}

    @staticmethod
    def _write_strings(blob_path: Path, offsets_path: Path, strings: list[str]) -> None:
        encoded = [s.encode() for s in strings]
        blob_path.write_bytes(b"".join(encoded))
        np.save(offsets_path, layout.offsets(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))))
