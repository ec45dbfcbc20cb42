"""The entity graph A2RAG walks: entities, relation facts with their source chunks, and the
entity-to-chunk map used for provenance map-back. Built once per index view; `degraded` makes the
copies the extraction-loss stress test needs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from thinkgraph.models import EdgeType, NodeType
from thinkgraph.retrieval.views import IndexView

# The stand-in facts of links that state no relation (co-occurrence, synonymy): structure, not statements.
CO_OCCURS_WITH = "co-occurs with"
SAME_AS = "same as"
STRUCTURAL_PREDICATES = frozenset({CO_OCCURS_WITH, SAME_AS})


@dataclass(frozen=True, slots=True)
class Fact:
    subject: int
    predicate: str
    object: int
    chunks: tuple[str, ...]


@dataclass
class EntityGraph:
    ids: list[str]
    names: list[str]
    facts: list[Fact]
    chunks_of: list[tuple[str, ...]]  # entity row -> chunk ids that contain it (map-back pi)
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {node_id: i for i, node_id in enumerate(self.ids)}
        self.facts_between: dict[tuple[int, int], list[Fact]] = {}
        rows: list[int] = []
        cols: list[int] = []
        for fact in self.facts:
            a, b = sorted((fact.subject, fact.object))
            self.facts_between.setdefault((a, b), []).append(fact)
            rows += [fact.subject, fact.object]
            cols += [fact.object, fact.subject]
        n = len(self.ids)
        # the augmented graph G' with inverse edges, binary as in eq. (9)
        adjacency = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
        adjacency.data[:] = 1.0
        self.adjacency = adjacency
        self.degree = np.asarray(adjacency.sum(axis=1)).ravel()

    def facts_of(self, a: int, b: int) -> list[Fact]:
        return self.facts_between.get((min(a, b), max(a, b)), [])

    def incident_facts(self, node: int) -> list[Fact]:
        return [f for other in self.adjacency.indices[self.adjacency.indptr[node]:self.adjacency.indptr[node + 1]]
                for f in self.facts_of(node, int(other))]

    def degraded(self, fraction: float, seed: int) -> EntityGraph:
        """A copy with ``fraction`` of the entity nodes deleted, with their edges and map-back."""
        rng = np.random.default_rng(seed)
        drop = set(rng.choice(len(self.ids), int(round(fraction * len(self.ids))), replace=False).tolist())
        keep = [i for i in range(len(self.ids)) if i not in drop]
        new_row = {old: new for new, old in enumerate(keep)}
        facts = [Fact(new_row[f.subject], f.predicate, new_row[f.object], f.chunks) for f in self.facts
                 if f.subject in new_row and f.object in new_row]
        return EntityGraph([self.ids[i] for i in keep], [self.names[i] for i in keep], facts,
                           [self.chunks_of[i] for i in keep])


def build_entity_graph(view: IndexView) -> EntityGraph:
    store = view.store
    passages = view.passage_entities
    entities = list(store.iter_nodes(NodeType.ENTITY))
    ids = [n.id for n in entities]
    row = {node_id: i for i, node_id in enumerate(ids)}
    chunks_of_triplet: dict[str, list[str]] = {}
    for e in store.iter_edges([EdgeType.MENTIONED_IN]):
        chunks_of_triplet.setdefault(e.src, []).append(e.dst)
    facts: list[Fact] = []
    for node in store.iter_nodes(NodeType.TRIPLET):
        s, o = row.get(node.props.get("subject", "")), row.get(node.props.get("object", ""))
        if s is not None and o is not None and s != o:
            facts.append(Fact(s, str(node.props.get("predicate", "")), o, tuple(chunks_of_triplet.get(node.id, ()))))
    # model-free indexes have no triplets: co-occurrence links stand in as relation-less facts
    for e in store.iter_edges([EdgeType.CO_OCCURS, EdgeType.SYNONYM]):
        s, o = row.get(e.src), row.get(e.dst)
        if s is not None and o is not None and s != o:
            shared = tuple(sorted(set(passages.passages(e.src)) & set(passages.passages(e.dst))))
            facts.append(Fact(s, CO_OCCURS_WITH if e.type == EdgeType.CO_OCCURS else SAME_AS, o, shared))
    chunks_of = [tuple(passages.passages(node_id)) for node_id in ids]
    return EntityGraph(ids, [n.text for n in entities], facts, chunks_of)
