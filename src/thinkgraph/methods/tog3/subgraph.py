"""The evidence subgraph G_k of ToG-3 (passages, typed triples, communities) and the graph side of
the Retriever's hybrid retrieval: from retrieved nodes to the passages, triples and communities
they lead to (§3.2.1's MENTIONEDIN, OPENREL and SUMMARYFOR edges)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from thinkgraph.models import Edge, EdgeType, NodeType
from thinkgraph.retrieval.views import IndexView
from thinkgraph.store.base import GraphStore

Triple = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class TripleTypes:
    """A triple's type_s, type_p and type_o (§3.2.1, Fig. 11); "" where the index has none (an
    imported or model-free graph, or a triple the Constructor's refinement wrote)."""

    subject: str = ""
    relation: str = ""
    object: str = ""

    def props(self) -> dict[str, str]:
        """The known types under the property names the index uses for them."""
        pairs = (("subject_type", self.subject), ("relation_type", self.relation), ("object_type", self.object))
        return {name: value for name, value in pairs if value}


@dataclass
class Subgraph:
    passages: list[str] = field(default_factory=list)  # chunk ids, best first
    triples: list[Triple] = field(default_factory=list)
    communities: list[str] = field(default_factory=list)  # community node ids
    types: dict[Triple, TripleTypes] = field(default_factory=dict)  # the known types of the triples

    def summary(self) -> dict[str, int]:
        return {"passages": len(self.passages), "triples": len(self.triples), "communities": len(self.communities)}


def merge_types(graphs: Iterable[Subgraph],
                extra: dict[Triple, TripleTypes] | None = None) -> dict[Triple, TripleTypes]:
    """The triple types of several subgraphs (and of triples extracted on the fly), the first known
    types of a triple kept."""
    out: dict[Triple, TripleTypes] = {}
    for types in [*(g.types for g in graphs), extra or {}]:
        for triple, t in types.items():
            out.setdefault(triple, t)
    return out


@dataclass
class Links:
    """The edges the graph side follows, read once per index view (a store query per retrieved node
    costs milliseconds on an index of thousands of triplets, and there are dozens per question):
    MENTIONEDIN(t, c) both ways, SUMMARYFOR(m, e) and the OPENREL edges out of each entity."""

    chunks_of: dict[str, list[str]] = field(default_factory=dict)  # triplet id -> chunk ids
    triplets_of: dict[str, list[str]] = field(default_factory=dict)  # chunk id -> triplet ids
    members: dict[str, set[str]] = field(default_factory=dict)  # community id -> member entity ids
    relations: dict[str, list[tuple[str, str, TripleTypes]]] = field(default_factory=dict)  # (object, predicate, types)

    @classmethod
    def of(cls, view: IndexView) -> Links:
        def build() -> Links:
            found = cls()
            found.add(view.store.iter_edges([EdgeType.MENTIONED_IN, EdgeType.SUMMARY_FOR, EdgeType.OPENREL]))
            return found
        return view.memo("tog3.links", build)

    def add(self, edges: Iterable[Edge]) -> None:
        """Edges in the order the store holds them; the Constructor adds those it writes."""
        for e in edges:
            if e.type == EdgeType.MENTIONED_IN:
                self.chunks_of.setdefault(e.src, []).append(e.dst)
                self.triplets_of.setdefault(e.dst, []).append(e.src)
            elif e.type == EdgeType.SUMMARY_FOR:
                self.members.setdefault(e.src, set()).add(e.dst)
            elif e.type == EdgeType.OPENREL:
                types = TripleTypes(_text(e.props, "subject_type"), _text(e.props, "relation_type"),
                                    _text(e.props, "object_type"))
                self.relations.setdefault(e.src, []).append((e.dst, _text(e.props, "predicate"), types))


def _text(props: dict[str, object], key: str) -> str:
    return str(props.get(key) or "")


def expand(store: GraphStore, links: Links, top: Sequence[tuple[float, str, str]],
           max_member_relations: int) -> Subgraph:
    """Graph side of the hybrid retrieval: triplets lead to their chunks, chunks to their triplets,
    communities to the triples among their members (SUMMARY_FOR -> entity, OPENREL between
    members). ``top`` holds (score, node type, node id), best first."""
    g = Subgraph()
    triplet_ids: list[str] = []
    for _, node_type, nid in top:
        if node_type == NodeType.CHUNK:
            g.passages.append(nid)
            triplet_ids += links.triplets_of.get(nid, [])
        elif node_type == NodeType.TRIPLET:
            triplet_ids.append(nid)
            g.passages += links.chunks_of.get(nid, [])
        else:
            g.communities.append(nid)
    ends: list[tuple[str, str, str, TripleTypes]] = []  # (subject id, predicate, object id, types)
    for node in store.get_nodes(list(dict.fromkeys(triplet_ids))):
        ends.append((_text(node.props, "subject"), _text(node.props, "predicate"), _text(node.props, "object"),
                     TripleTypes(_text(node.props, "subject_type"), _text(node.props, "relation_type"),
                                 _text(node.props, "object_type"))))
    ends += member_relations(links, g.communities, max_member_relations)
    entities = {n.id: n for n in store.get_nodes(list({x for s, _, o, _ in ends for x in (s, o)}))}
    for s, p, o, types in dict.fromkeys(ends):
        if s not in entities or o not in entities or not entities[s].text or not entities[o].text:
            continue
        triple = (entities[s].text, p, entities[o].text)
        if triple not in g.triples:
            g.triples.append(triple)
            g.types[triple] = TripleTypes(types.subject or _text(entities[s].props, "type"), types.relation,
                                          types.object or _text(entities[o].props, "type"))
    g.passages = list(dict.fromkeys(g.passages))
    return g


def member_relations(links: Links, communities: list[str], limit: int) -> list[tuple[str, str, str, TripleTypes]]:
    """(subject id, predicate, object id, types) of the OPENREL edges between members of each
    community, up to ``limit`` in all (a high-level community can have many members)."""
    found: list[tuple[str, str, str, TripleTypes]] = []
    for cid in communities:
        members = links.members.get(cid, set())
        for member in sorted(members):
            found += [(member, p, dst, types) for dst, p, types in links.relations.get(member, []) if dst in members]
            if len(found) >= limit:
                return found
    return found
