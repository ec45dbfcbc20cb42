"""Turning documents, chunks and extracted facts into graph records (pure functions)."""

from __future__ import annotations

from dataclasses import dataclass, field

from thinkgraph.ids import document_node_id, entity_id, normalize_name, proposition_id, triplet_id
from thinkgraph.locations import PARTS_PROP, parts_to_props, place
from thinkgraph.models import Chunk, Edge, EdgeType, Node, NodeType, Provenance, SourceDocument
from thinkgraph.store.common import edge_key


@dataclass(frozen=True, slots=True)
class EntitySpec:
    name: str
    type: str = ""
    description: str = ""


@dataclass(frozen=True, slots=True)
class TripleSpec:
    subject: str
    predicate: str
    object: str
    subject_type: str = ""  # type_s, type_o and type_p of ToG-3 §3.2.1 ("" when the extractor gives none)
    object_type: str = ""
    description: str = ""
    relation_type: str = ""


@dataclass(frozen=True, slots=True)
class PropositionSpec:
    text: str
    entities: list[str]


@dataclass(slots=True)
class Extraction:
    """What one extractor found in one chunk."""

    entities: list[EntitySpec] = field(default_factory=list)
    triples: list[TripleSpec] = field(default_factory=list)
    cooccurrences: list[tuple[str, str]] = field(default_factory=list)
    propositions: list[PropositionSpec] = field(default_factory=list)


@dataclass(slots=True)
class GraphRecords:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)

    def extend(self, other: GraphRecords) -> None:
        self.nodes.extend(other.nodes)
        self.edges.extend(other.edges)
        self.provenance.extend(other.provenance)


def document_records(doc: SourceDocument, chunks: list[Chunk], summary: str = "") -> GraphRecords:
    """The document node (its text is the summary, or the title) with its chunks; a converted file's
    parts (slides, sheets, chapters) are kept on the document node, and each chunk says where it lies."""
    out = GraphRecords()
    doc_node = document_node_id(doc.id)
    out.nodes.append(Node(doc_node, NodeType.DOCUMENT, summary or doc.title or doc.id,
                          {"doc_id": doc.id, "source": doc.source, "title": doc.title,
                           **({"page_starts": list(doc.page_starts)} if doc.page_starts else {}),
                           **({PARTS_PROP: parts_to_props(doc.parts)} if doc.parts else {})}))
    for chunk in chunks:
        where = place(doc.parts, doc.page_starts, chunk.start, chunk.end)
        out.nodes.append(Node(chunk.id, NodeType.CHUNK, chunk.text,
                              {"doc_id": doc.id, "title": doc.title, "index": chunk.index,
                               "n_tokens": chunk.n_tokens, **({"location": where} if where else {})}))
        out.provenance.append(Provenance(chunk.id, doc.id, chunk.id, chunk.start, chunk.end))
        edge = Edge(chunk.id, doc_node, EdgeType.PART_OF)
        out.edges.append(edge)
        out.provenance.append(Provenance(edge_key(edge), doc.id, chunk.id, chunk.start, chunk.end))
    return out


def _span(chunk: Chunk, mention: str) -> tuple[int, int]:
    """Character span of ``mention`` in the document if it occurs in the chunk, else the chunk's."""
    pos = chunk.text.casefold().find(mention.casefold()) if mention else -1
    if pos < 0:
        return chunk.start, chunk.end
    return chunk.start + pos, chunk.start + pos + len(mention)


class _Builder:
    def __init__(self, chunk: Chunk) -> None:
        self.chunk = chunk
        self.out = GraphRecords()
        self.seen_entities: set[str] = set()

    def prov(self, item_id: str, mention: str = "") -> None:
        start, end = _span(self.chunk, mention)
        self.out.provenance.append(Provenance(item_id, self.chunk.doc_id, self.chunk.id, start, end))

    def edge(self, edge: Edge, mention: str = "") -> None:
        self.out.edges.append(edge)
        self.prov(edge_key(edge), mention)

    def entity(self, name: str, etype: str = "", description: str = "") -> str | None:
        if not normalize_name(name):
            return None
        eid = entity_id(name)
        if eid not in self.seen_entities:
            self.seen_entities.add(eid)
            props = {"type": etype, "description": description} if etype or description else {}
            self.out.nodes.append(Node(eid, NodeType.ENTITY, name.strip(), props))
            self.prov(eid, name)
            self.edge(Edge(self.chunk.id, eid, EdgeType.CONTAINS), name)
        return eid


def _types(t: TripleSpec) -> dict[str, str]:
    """The triple's known types (type_s, type_p, type_o), for the triplet node and its OPENREL edge."""
    pairs = (("subject_type", t.subject_type), ("relation_type", t.relation_type), ("object_type", t.object_type))
    return {name: " ".join(value.split()) for name, value in pairs if value.strip()}


def extraction_records(chunk: Chunk, extraction: Extraction) -> GraphRecords:
    """Entity, triplet and relation records for one chunk, every one tied to the chunk."""
    b = _Builder(chunk)
    for ent in extraction.entities:
        b.entity(ent.name, ent.type, ent.description)
    for t in extraction.triples:
        sid = b.entity(t.subject, t.subject_type)
        oid = b.entity(t.object, t.object_type)
        predicate = " ".join(t.predicate.split())
        if sid is None or oid is None or not predicate or sid == oid:
            continue
        tid = triplet_id(t.subject, predicate, t.object)
        props = {"subject": sid, "predicate": predicate, "object": oid,
                 "subject_type": t.subject_type, "object_type": t.object_type}
        if t.description:
            props["description"] = t.description
        typed = _types(t)
        b.out.nodes.append(Node(tid, NodeType.TRIPLET, f"{t.subject.strip()} {predicate} {t.object.strip()}",
                                {**props, **typed}))
        b.prov(tid, t.subject)
        b.edge(Edge(tid, chunk.id, EdgeType.MENTIONED_IN), t.subject)
        # the relation's description rides on its edge too: community summaries read the entity graph (ToG-3 Fig. 12)
        described = {"description": t.description} if t.description else {}
        b.edge(Edge(sid, oid, EdgeType.OPENREL, props={"predicate": predicate, **typed, **described}), t.subject)
    for prop in extraction.propositions:
        pid = proposition_id(prop.text)
        b.out.nodes.append(Node(pid, NodeType.PROPOSITION, prop.text))
        b.prov(pid, prop.text)
        b.edge(Edge(pid, chunk.id, EdgeType.FROM))
        for name in prop.entities:
            if eid := b.entity(name):
                b.edge(Edge(pid, eid, EdgeType.MENTIONS), name)
    for a, c in extraction.cooccurrences:
        aid, cid = b.entity(a), b.entity(c)
        if aid and cid and aid != cid:
            src, dst = sorted((aid, cid))
            b.edge(Edge(src, dst, EdgeType.CO_OCCURS), a)
    return b.out
