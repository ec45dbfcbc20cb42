"""The proposition graph: propositions linked to their entities and their passage.

Propositions come from proposition nodes (LLM extraction) or, for an index built from imported
OpenIE or LLM triplets, from triplet nodes: each triple is a proposition linked to its two entities
and its passage (ToPG's OpenIE variant)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from thinkgraph.embed.vector_index import VectorIndex
from thinkgraph.graph.local_ppr import LocalGraph
from thinkgraph.graph.proposition import bipartite_adjacency
from thinkgraph.models import Edge, EdgeType, NodeType
from thinkgraph.retrieval.views import IndexView


@dataclass
class PropositionGraph:
    ids: list[str]  # proposition node ids, rows of ``incidence``
    texts: list[str]
    connectors: list[str]  # entity and chunk ids, columns of ``incidence``
    incidence: sp.csr_matrix
    passages: list[tuple[str, ...]]  # proposition row -> chunk ids it comes from
    vectors: VectorIndex
    canonical: dict[str, str] = field(default_factory=dict)  # entity -> its synonym group's connector
    kind: str = NodeType.PROPOSITION  # the node type standing as propositions (triplets on an OpenIE index)
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {pid: i for i, pid in enumerate(self.ids)}

    @property
    def n(self) -> int:
        return len(self.ids)

    @cached_property
    def walk_graph(self) -> LocalGraph:
        """G (propositions, then their entities and passages) as the push walk reads it (GExtract)."""
        return LocalGraph.of(bipartite_adjacency(self.incidence))

    @cached_property
    def by_passage(self) -> dict[str, list[int]]:
        """Chunk id -> the propositions that come from it, in row order."""
        out: dict[str, list[int]] = {}
        for row, chunks in enumerate(self.passages):
            for chunk in chunks:
                out.setdefault(chunk, []).append(row)
        return out

    @cached_property
    def _columns(self) -> tuple[dict[str, int], sp.csc_matrix]:
        return {c: j for j, c in enumerate(self.connectors)}, sp.csc_matrix(self.incidence)

    def mentioning(self, entity_ids: Iterable[str]) -> set[int]:
        """Propositions linked to any of the entities (or to a synonym of one)."""
        column, by_column = self._columns
        out: set[int] = set()
        for e in entity_ids:
            if (j := column.get(self.canonical.get(e, e))) is not None:
                out.update(by_column.indices[by_column.indptr[j]:by_column.indptr[j + 1]].tolist())
        return out


def _synonym_representatives(edges: Iterable[Edge]) -> dict[str, str]:
    """Union-find over synonym pairs: each entity maps to the smallest id of its synonym group."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in edges:
        a, b = find(e.src), find(e.dst)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return {x: find(x) for x in parent}


def proposition_graph(view: IndexView) -> PropositionGraph:
    """The index's proposition graph, built once per view (i.e. per content revision), not per question."""
    return view.memo("topg.proposition_graph", lambda: build_proposition_graph(view))


def build_proposition_graph(view: IndexView) -> PropositionGraph:
    store = view.store
    kind = NodeType.PROPOSITION if view.node_counts.get(NodeType.PROPOSITION) else NodeType.TRIPLET
    nodes = list(store.iter_nodes(kind))
    ids = [n.id for n in nodes]
    row = {pid: i for i, pid in enumerate(ids)}
    entities: dict[int, set[str]] = {i: set() for i in range(len(ids))}
    chunks: dict[int, list[str]] = {i: [] for i in range(len(ids))}
    if kind == NodeType.TRIPLET:
        for i, node in enumerate(nodes):
            entities[i].update(e for e in (node.props.get("subject"), node.props.get("object")) if e)
        source_edges = [EdgeType.MENTIONED_IN]
    else:
        for e in store.iter_edges([EdgeType.MENTIONS]):
            if e.src in row:
                entities[row[e.src]].add(e.dst)
        source_edges = [EdgeType.FROM]
    for e in store.iter_edges(source_edges):
        if e.src in row:
            chunks[row[e.src]].append(e.dst)
    # entity reconciliation (ToPG App. A): entities joined by SYNONYM edges act as one connector
    canonical = _synonym_representatives(store.iter_edges([EdgeType.SYNONYM]))
    entities = {i: {canonical.get(e, e) for e in es} for i, es in entities.items()}
    connectors = sorted({c for s in entities.values() for c in s} | {c for s in chunks.values() for c in s})
    col = {c: j for j, c in enumerate(connectors)}
    rows, cols = [], []
    for i in range(len(ids)):
        for c in entities[i] | set(chunks[i]):
            rows.append(i)
            cols.append(col[c])
    incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(ids), len(connectors)))
    vector_index = view.vectors(kind)
    order = [vector_index.position[pid] for pid in ids]
    vectors = VectorIndex(ids, vector_index.vectors[order] if ids else vector_index.vectors)
    return PropositionGraph(ids, [n.text for n in nodes], connectors, incidence,
                            [tuple(chunks[i]) for i in range(len(ids))], vectors, canonical, kind)
