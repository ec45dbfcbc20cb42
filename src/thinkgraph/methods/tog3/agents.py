"""The Retriever of ToG-3 (keyword expansion, hybrid vector-graph retrieval, reranking) and the
evidence subgraph it returns."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from thinkgraph.llm.service import LLM
from thinkgraph.methods.tog3.config import ToG3Config
from thinkgraph.methods.tog3.prompts import KEYWORDS
from thinkgraph.models import EdgeType, NodeType, TraceStep
from thinkgraph.retrieval.views import IndexView

Triple = tuple[str, str, str]
_ARROW = re.compile(r"^\s*(?:[-*\d.)]+\s*)?(.+?)\s*->\s*(.+?)\s*->\s*(.+?)\s*$")


@dataclass
class Subgraph:
    passages: list[str] = field(default_factory=list)  # chunk ids, best first
    triples: list[Triple] = field(default_factory=list)
    communities: list[str] = field(default_factory=list)  # community node ids

    def summary(self) -> dict[str, int]:
        return {"passages": len(self.passages), "triples": len(self.triples), "communities": len(self.communities)}


def parse_triples(text: str) -> list[Triple] | None:
    """Lines "a -> r -> b"; None when the model said every triple is irrelevant."""
    if text.strip().strip(".'\"").casefold() == "none":
        return None
    out: list[Triple] = []
    for line in text.splitlines():
        if m := _ARROW.match(line):
            triple = (m.group(1).strip(), m.group(2).strip(), m.group(3).strip())
            if all(triple) and triple not in out:
                out.append(triple)
    return out


def parse_keywords(reply: str) -> list[str]:
    """The '^'-separated keywords of a reply (the line that has them, after any "KEYWORDS:" label)."""
    lines = [ln for ln in reply.splitlines() if ln.strip()]
    line = next((ln for ln in lines if "^" in ln), lines[0] if lines else "")
    label = line.casefold().rfind("keywords:")
    line = line[label + len("keywords:"):] if label >= 0 else line
    return [k.strip().strip("*'\"") for k in line.split("^") if k.strip().strip("*'\"")]


@dataclass
class Retriever:
    view: IndexView
    config: ToG3Config
    llm: LLM | None  # None: retrieval only, without keyword expansion

    def _types(self) -> list[str]:
        types: list[str] = [NodeType.CHUNK, NodeType.TRIPLET]
        return types + [NodeType.COMMUNITY] if self.config.use_communities else types

    async def keywords(self, query: str) -> list[str]:
        if self.llm is None:
            return []
        reply = await self.llm.text([{"role": "user", "content": KEYWORDS.format(
            max_keywords=self.config.max_keywords, query=query)}], step="tog3.keywords", kind="query")
        return parse_keywords(reply)[: self.config.max_keywords]

    async def retrieve(self, query: str, trace: list[TraceStep]) -> Subgraph:
        keywords = await self.keywords(query)
        vec = self.view.embed_query(" ".join([query, *keywords]))
        hits: list[tuple[float, str, str]] = []
        for node_type in self._types():
            found = self.view.vectors(node_type).search(vec, self.config.top_k)
            hits += [(score, node_type, nid) for nid, score in found]
        top = sorted(hits, reverse=True)[: self.config.top_k]
        graph = self._expand(top)
        graph = self.rerank(graph, vec)
        trace.append(TraceStep("retriever", "retrieve", {"query": query, "keywords": keywords},
                               {"top_nodes": [nid for _, _, nid in top], **graph.summary()}))
        return graph

    def _expand(self, top: list[tuple[float, str, str]]) -> Subgraph:
        """Graph side of the hybrid retrieval: triplets lead to their chunks, chunks to their triplets,
        communities to the triplets among their members (SUMMARY_FOR -> entity, OPENREL between
        members)."""
        store = self.view.store
        g = Subgraph()
        triplet_ids: list[str] = []
        for _, node_type, nid in top:
            if node_type == NodeType.CHUNK:
                g.passages.append(nid)
                triplet_ids += [e.src for e in store.edges_of(nid, EdgeType.MENTIONED_IN)]
            elif node_type == NodeType.TRIPLET:
                triplet_ids.append(nid)
                g.passages += [e.dst for e in store.edges_of(nid, EdgeType.MENTIONED_IN)]
            else:
                g.communities.append(nid)
        ends: list[tuple[str, str, str]] = []
        for node in store.get_nodes(list(dict.fromkeys(triplet_ids))):
            ends.append((str(node.props.get("subject", "")), str(node.props.get("predicate", "")),
                         str(node.props.get("object", ""))))
        ends += self._member_relations(g.communities)
        names = {n.id: n.text for n in store.get_nodes(list({x for s, _, o in ends for x in (s, o)}))}
        for s, p, o in dict.fromkeys(ends):
            if names.get(s) and names.get(o) and (names[s], p, names[o]) not in g.triples:
                g.triples.append((names[s], p, names[o]))
        g.passages = list(dict.fromkeys(g.passages))
        return g

    def _member_relations(self, communities: list[str]) -> list[tuple[str, str, str]]:
        """(subject id, predicate, object id) of the OPENREL edges between members of each community,
        up to ``max_triples_shown`` in all (a high-level community can have many members)."""
        store = self.view.store
        found: list[tuple[str, str, str]] = []
        for cid in communities:
            members = {e.dst for e in store.edges_of(cid, EdgeType.SUMMARY_FOR) if e.src == cid}
            for member in sorted(members):
                for e in store.edges_of(member, EdgeType.OPENREL):
                    if e.src == member and e.dst in members:
                        found.append((e.src, str(e.props.get("predicate", "")), e.dst))
                if len(found) >= self.config.max_triples_shown:
                    return found
        return found

    def rerank(self, graph: Subgraph, vec: np.ndarray) -> Subgraph:
        """The Reranker: passages ordered by similarity to the query, the top ones kept."""
        chunks = self.view.vectors(NodeType.CHUNK)
        scored = [(float(chunks.vectors[chunks.position[c]] @ vec), c) for c in graph.passages if c in chunks.position]
        graph.passages = [c for _, c in sorted(scored, reverse=True)][: self.config.context_passages]
        graph.triples = graph.triples[: self.config.max_triples_shown]
        return graph

    def context(self, graph: Subgraph) -> str:
        store = self.view.store
        parts = []
        if graph.triples:
            parts.append("Facts:\n" + "\n".join(f"{s} -> {p} -> {o}" for s, p, o in graph.triples))
        for node in store.get_nodes(graph.communities):
            parts.append(f"Summary: {node.text}")
        for i, node in enumerate(store.get_nodes(graph.passages), 1):
            title = node.props.get("title")
            parts.append(f"Passage {i}: {title + ': ' if title else ''}{node.text}")
        return "\n\n".join(parts) or "(empty)"
