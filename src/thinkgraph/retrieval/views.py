"""Read-only views of an index that retrievers share: vector indexes per node type and the
entity-passage graph as a sparse matrix. Built once per opened index."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from thinkgraph.embed.base import Embedder
from thinkgraph.embed.vector_index import VectorIndex
from thinkgraph.graph.matrix import GraphMatrix, build_graph_matrix
from thinkgraph.index.embedding_stage import check_embedding_manifest, node_embedding_text
from thinkgraph.models import EdgeType, NodeType
from thinkgraph.retrieval.lexical import LexicalIndex
from thinkgraph.retrieval.linking import EntityLinker
from thinkgraph.store.base import GraphStore

# Edges of the entity-passage graph that PPR walks (undirected), as in HippoRAG 2.
PPR_EDGE_TYPES = (EdgeType.OPENREL, EdgeType.CO_OCCURS, EdgeType.SYNONYM, EdgeType.CONTAINS)


@dataclass
class IndexView:
    store: GraphStore
    embedder: Embedder
    ann_threshold: int = 100_000

    def __post_init__(self) -> None:
        check_embedding_manifest(self.store, self.embedder)

    def vectors(self, node_type: str) -> VectorIndex:
        return self._vector_indexes[node_type]

    @cached_property
    def _vector_indexes(self) -> dict[str, VectorIndex]:
        out: dict[str, VectorIndex] = {}
        for node_type in NodeType:
            ids, matrix = self.store.get_vectors([node_type])
            out[node_type] = VectorIndex(ids, matrix, ann_threshold=self.ann_threshold)
        return out

    def lexical(self, node_type: str) -> LexicalIndex:
        """BM25 over the texts the encoder saw, in the order of ``vectors(node_type).ids`` so that
        lexical and dense scores line up item by item."""
        if node_type not in self._lexical_indexes:
            ids = self.vectors(node_type).ids
            nodes = {n.id: n for n in self.store.get_nodes(ids)}
            texts = [node_embedding_text(nodes[i]) if i in nodes else "" for i in ids]
            self._lexical_indexes[node_type] = LexicalIndex(ids, texts)
        return self._lexical_indexes[node_type]

    @cached_property
    def _lexical_indexes(self) -> dict[str, LexicalIndex]:
        return {}

    @cached_property
    def entity_linker(self) -> EntityLinker:
        nodes = list(self.store.iter_nodes(NodeType.ENTITY))
        return EntityLinker([n.id for n in nodes], [n.text for n in nodes])

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]

    @cached_property
    def entity_passage_graph(self) -> GraphMatrix:
        nodes = [n.id for n in self.store.iter_nodes(NodeType.ENTITY)]
        nodes += [n.id for n in self.store.iter_nodes(NodeType.CHUNK)]
        edges = ((e.src, e.dst, float(e.weight)) for e in self.store.iter_edges(PPR_EDGE_TYPES))
        return build_graph_matrix(nodes, edges, undirected=True)

    @cached_property
    def entity_graph(self) -> GraphMatrix:
        nodes = [n.id for n in self.store.iter_nodes(NodeType.ENTITY)]
        edges = ((e.src, e.dst, 1.0) for e in self.store.iter_edges(
            (EdgeType.OPENREL, EdgeType.CO_OCCURS, EdgeType.SYNONYM)))
        return build_graph_matrix(nodes, edges, undirected=True)

    @cached_property
    def chunk_entities(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for e in self.store.iter_edges([EdgeType.CONTAINS]):
            out.setdefault(e.src, []).append(e.dst)
        return out

    @cached_property
    def entity_chunks(self) -> dict[str, list[str]]:
        """Entity id -> chunks that contain it (the provenance map-back)."""
        out: dict[str, list[str]] = {}
        for chunk, entities in self.chunk_entities.items():
            for eid in entities:
                out.setdefault(eid, []).append(chunk)
        return out

    @cached_property
    def entity_passage_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for entities in self.chunk_entities.values():
            for eid in entities:
                counts[eid] = counts.get(eid, 0) + 1
        return counts

    @cached_property
    def relation_labels(self) -> dict[tuple[str, str], str]:
        labels: dict[tuple[str, str], str] = {}
        for e in self.store.iter_edges([EdgeType.OPENREL]):
            labels.setdefault((e.src, e.dst), str(e.props.get("predicate", "")))
        return labels
