"""Read-only views of an index that retrievers share: vector indexes per node type and the
entity-passage graph as a sparse matrix. Built once per opened index, or read from the view cache
(``view_cache.py``) that the first process to build them for this content revision filled."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import numpy as np

from thinkgraph.embed.base import Embedder
from thinkgraph.embed.manifest import check_embedding_manifest, node_embedding_text
from thinkgraph.embed.vector_index import VectorIndex
from thinkgraph.graph.local_ppr import LocalGraph
from thinkgraph.graph.matrix import GraphMatrix, build_graph_matrix
from thinkgraph.models import EdgeType, NodeType
from thinkgraph.retrieval.earlier import EarlierRevisions
from thinkgraph.retrieval.id_table import IdTable
from thinkgraph.retrieval.incidence import Incidence, PassageEntities
from thinkgraph.retrieval.lexical import LexicalIndex
from thinkgraph.retrieval.linking import EntityLinker
from thinkgraph.retrieval.name_table import NameTable
from thinkgraph.retrieval.view_cache import ViewCache, read_array, read_json, write_arrays, write_json
from thinkgraph.retrieval.view_follow import ChangeFollower
from thinkgraph.retrieval.view_items import read_graph, read_vectors, write_graph, write_vectors
from thinkgraph.store.base import GraphStore

T = TypeVar("T")

PREPARED = "prepared"  # the cache item that says prepare() finished for this revision
TEXT_BATCH = 50_000  # texts read and tokenised at a time for BM25 (their token strings bound its memory)
# Edges of the entity-passage graph that PPR walks (undirected), as in HippoRAG 2.
PPR_EDGE_TYPES = (EdgeType.OPENREL, EdgeType.CO_OCCURS, EdgeType.SYNONYM, EdgeType.CONTAINS)


@dataclass
class IndexView:
    store: GraphStore
    embedder: Embedder
    ann_threshold: int = 100_000
    # On-disk copies of the derived parts for this content revision (None: always built from the store).
    cache: ViewCache | None = None

    def __post_init__(self) -> None:
        check_embedding_manifest(self.store, self.embedder)
        self._vector_indexes: dict[str, VectorIndex] = {}
        self._lexical_indexes: dict[str, LexicalIndex] = {}
        self._memo: dict[str, object] = {}
        self._earlier = EarlierRevisions(self.cache) if self.cache is not None else None
        self._follower = ChangeFollower(self.cache) if self.cache is not None else None

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """What a method derives from this view (A2RAG's entity graph, ToPG's proposition graph), built
        once per view, i.e. once per content revision of the index, not once per question."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]  # type: ignore[return-value]

    def _cached(self, name: str, read: Callable[[Path], T], build: Callable[[], T],
                write: Callable[[T, Path], None]) -> T:
        return build() if self.cache is None else self.cache.get(name, read, build, write)

    def vectors(self, node_type: str) -> VectorIndex:
        """The vectors of one node type, loaded on first use (a method reads two or three types)."""
        if node_type not in self._vector_indexes:
            name = f"vectors-{node_type}"
            ids, matrix = self._cached(name, read_vectors, lambda: self._build_vectors(name, node_type), write_vectors)
            if self.cache is not None and not isinstance(matrix, np.memmap):
                # just built and kept: the kept copy is mapped instead, so that the HNSW graph built over
                # it is kept beside it too (else the next process built it again: 47 s at 100k passages)
                ids, matrix = self.cache.read(name, read_vectors) or (ids, matrix)
            earlier = self._earlier
            self._vector_indexes[node_type] = VectorIndex(
                ids, matrix, ann_threshold=self.ann_threshold, position=ids.rows if isinstance(ids, IdTable) else None,
                earlier=(lambda: earlier.graph(name, ids, matrix)) if earlier is not None else None)
        return self._vector_indexes[node_type]

    def _build_vectors(self, name: str, node_type: str) -> tuple[Sequence[str], np.ndarray]:
        followed = self._follower.vectors(name, node_type) if self._follower is not None else None
        return followed if followed is not None else self.store.get_vectors([node_type])

    def lexical(self, node_type: str) -> LexicalIndex:
        """BM25 over the texts the encoder saw, in the order of ``vectors(node_type).ids`` so that
        lexical and dense scores line up item by item."""
        if node_type not in self._lexical_indexes:
            vectors = self.vectors(node_type)
            ids = vectors.ids
            self._lexical_indexes[node_type] = self._cached(
                f"lexical-{node_type}", lambda folder: LexicalIndex.load(ids, folder),
                lambda: self._build_lexical(node_type, ids, vectors.vectors), LexicalIndex.save)
        return self._lexical_indexes[node_type]

    def _build_lexical(self, node_type: str, ids: Sequence[str], matrix: np.ndarray) -> LexicalIndex:
        """The last revision's BM25 extended by the texts this one adds or changed, else built whole;
        the texts are read and tokenised a batch at a time."""
        found = self._earlier.lexical(f"vectors-{node_type}", f"lexical-{node_type}", ids, matrix) \
            if self._earlier is not None else None
        if found is None:
            found = LexicalIndex.build(ids[:0], []), np.zeros(0, dtype=np.int64)
        earlier, moved = found
        covered = np.zeros(len(ids), dtype=bool)
        covered[moved[moved >= 0]] = True
        fresh = np.flatnonzero(~covered)
        batches = (self._texts([ids[int(i)] for i in fresh[start:start + TEXT_BATCH]])
                   for start in range(0, len(fresh), TEXT_BATCH))
        return LexicalIndex.extend(earlier, moved, ids, fresh, batches)

    def _texts(self, ids: list[str]) -> list[str]:
        """The texts the encoder saw for ``ids`` ("" for a node no longer in the store)."""
        nodes = {n.id: n for n in self.store.get_nodes(ids)}
        return [node_embedding_text(nodes[i]) if i in nodes else "" for i in ids]

    @cached_property
    def entity_linker(self) -> EntityLinker:
        def build() -> EntityLinker:
            nodes = list(self.store.iter_nodes(NodeType.ENTITY))
            return EntityLinker([n.id for n in nodes], [n.text for n in nodes])

        return self._cached("linker", lambda f: EntityLinker.from_table(NameTable.load(f)), build,
                            lambda linker, f: linker.table.save(f))

    def prepare(self) -> None:
        """Build now, and keep in the view cache, what `ppr` and the methods built on its walk read, so
        that the first question after indexing does not pay for it: each node type's vectors (with their
        HNSW graph from ``ann_threshold`` vectors: 10 minutes for a million passages) and BM25, the
        entity-passage graph, the entity names and the passages' entities. Nothing is read when this
        revision's view was prepared before (a run that changed nothing: reading it back costs seconds
        at a million passages)."""
        if self.cache is not None and (self.cache.folder / PREPARED).is_dir():
            return
        for node_type in (NodeType.CHUNK, NodeType.TRIPLET, NodeType.ENTITY):
            if len(self.vectors(node_type)):
                self.lexical(node_type)
        _ = self.chunk_rows, self.push_graph, self.entity_graph, self.entity_linker, self.incidence
        _ = self.relation_labels
        _ = self.relation_vectors
        self._cached(PREPARED, lambda folder: True, lambda: True, lambda value, folder: None)

    def embed_query(self, text: str) -> np.ndarray:
        row: np.ndarray = self.embedder.embed([text])[0]
        return row

    @cached_property
    def entity_passage_graph(self) -> GraphMatrix:
        name = "graph-entity-passage"

        def build() -> GraphMatrix:
            if self._follower is not None and (followed := self._follower.graph(
                    name, (NodeType.ENTITY, NodeType.CHUNK), PPR_EDGE_TYPES, unit=False)) is not None:
                return followed
            nodes = [n.id for n in self.store.iter_nodes(NodeType.ENTITY)]
            nodes += [n.id for n in self.store.iter_nodes(NodeType.CHUNK)]
            src, dst, weight = self.store.edge_columns(PPR_EDGE_TYPES)  # (no Edge, no JSON per row)
            return build_graph_matrix(nodes, zip(src, dst, weight, strict=True), undirected=True)

        return self._cached(name, read_graph, build, write_graph)

    @cached_property
    def chunk_rows(self) -> np.ndarray:
        """Rows of the passages (in the order of ``vectors(CHUNK)``) in the entity-passage graph."""
        def build() -> np.ndarray:
            return np.array(self.entity_passage_graph.rows(self.vectors(NodeType.CHUNK).ids), dtype=np.int64)

        return self._cached("chunk-rows", lambda f: read_array(f, "rows"), build,
                            lambda rows, f: write_arrays(f, rows=rows))

    @cached_property
    def passage_of_row(self) -> np.ndarray:
        """For each row of the entity-passage graph, its passage's position among the chunk vectors (-1
        for an entity): the inverse of ``chunk_rows``."""
        out = np.full(self.entity_passage_graph.n, -1, dtype=np.int64)
        out[self.chunk_rows] = np.arange(self.chunk_rows.shape[0])
        return out

    @cached_property
    def push_graph(self) -> LocalGraph:
        """The entity-passage graph as local push PPR reads it (out-edge shares and degrees)."""
        adjacency = self.entity_passage_graph.adjacency

        def read(folder: Path) -> LocalGraph:
            return LocalGraph(adjacency.indptr, adjacency.indices, read_array(folder, "share"),
                              read_array(folder, "degree"))

        return self._cached("push-entity-passage", read, lambda: LocalGraph.of(adjacency),
                            lambda g, f: write_arrays(f, share=g.share, degree=g.degree))

    @cached_property
    def entity_graph(self) -> GraphMatrix:
        name, types = "graph-entity", (EdgeType.OPENREL, EdgeType.CO_OCCURS, EdgeType.SYNONYM)

        def build() -> GraphMatrix:
            if self._follower is not None and (followed := self._follower.graph(
                    name, (NodeType.ENTITY,), types, unit=True)) is not None:
                return followed
            nodes = [n.id for n in self.store.iter_nodes(NodeType.ENTITY)]
            src, dst, _ = self.store.edge_columns(types)
            return build_graph_matrix(nodes, zip(src, dst, itertools.repeat(1.0)), undirected=True)

        return self._cached(name, read_graph, build, write_graph)

    @cached_property
    def incidence(self) -> Incidence:
        """Passage rows (``vectors(CHUNK)``'s order) <-> entity rows (``entity_passage_graph``'s)."""
        def build() -> Incidence:
            chunks, graph = self.vectors(NodeType.CHUNK), self.entity_passage_graph
            if self._follower is not None and isinstance(chunks.ids, IdTable) and isinstance(graph.ids, IdTable) \
                    and (followed := self._follower.incidence("passage-entities", f"vectors-{NodeType.CHUNK}",
                                                              "graph-entity-passage", chunks.ids, graph.ids)):
                return followed
            src, dst, _ = self.store.edge_columns([EdgeType.CONTAINS])
            rows, cols = _rows_of(chunks.ids, chunks.position, src), _rows_of(graph.ids, graph.index, dst)
            keep = (rows >= 0) & (cols >= 0)
            return Incidence.build(rows[keep], cols[keep], len(chunks), graph.n)

        return self._cached("passage-entities", Incidence.load, build, Incidence.save)

    @cached_property
    def passage_entities(self) -> PassageEntities:
        """The entities each passage contains and the passages each entity occurs in, by id."""
        chunks, graph = self.vectors(NodeType.CHUNK), self.entity_passage_graph
        return PassageEntities(self.incidence, chunks.ids, chunks.position, graph.ids, graph.index)

    @cached_property
    def relation_vectors(self) -> tuple[Sequence[str], np.ndarray]:
        """The distinct predicates of the index's relations, sorted, and their vectors (A2RAG matches the
        question's relation phrase against them): embedded once per revision, not once per question."""
        def build() -> tuple[Sequence[str], np.ndarray]:
            edges = self.store.iter_edges([EdgeType.OPENREL])
            names = sorted({str(e.props.get("predicate", "")) for e in edges} - {""})
            matrix = self.embedder.embed(names) if names else np.zeros((0, self.embedder.dim), dtype=np.float32)
            return names, matrix

        return self._cached("vectors-relations", read_vectors, build, write_vectors)

    @cached_property
    def node_counts(self) -> dict[str, int]:
        """Nodes per type in this revision (what a method finds missing is said per question)."""
        return self.store.count_nodes()

    @cached_property
    def relation_labels(self) -> dict[tuple[str, str], str]:
        def build() -> dict[tuple[str, str], str]:
            labels: dict[tuple[str, str], str] = {}
            for e in self.store.iter_edges([EdgeType.OPENREL]):
                labels.setdefault((e.src, e.dst), str(e.props.get("predicate", "")))
            return labels

        return self._cached(
            "relation-labels", lambda f: {(a, b): label for a, b, label in read_json(f, "value")}, build,
            lambda labels, f: write_json(f, "value", [[a, b, label] for (a, b), label in labels.items()]))


# cache item layouts ------------------------------------------------------------------------------
def _rows_of(ids: Sequence[str], index: Mapping[str, int], names: list[str]) -> np.ndarray:
    """Each name's row, -1 where absent: one binary search of them all over ids kept as arrays, else
    the dictionary (a search per name over 424k CONTAINS edges took 5 s of a view at 100k passages)."""
    if isinstance(ids, IdTable):
        return ids.rows_of(names)
    return np.fromiter((index.get(name, -1) for name in names), dtype=np.int64, count=len(names))
