"""The Retriever (keyword expansion, hybrid vector-graph retrieval, reranking) and the Constructor
(retrieve for the sub-query, extract triplets from newly reached chunks, refine the subgraph)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from thinkgraph.errors import LLMUnavailableError, StructuredOutputError
from thinkgraph.index.extract_llm import LLMTripletExtractor
from thinkgraph.index.records import extraction_records
from thinkgraph.llm.service import LLM
from thinkgraph.methods.tog3.config import ToG3Config
from thinkgraph.methods.tog3.prompts import KEYWORDS, REFINE
from thinkgraph.models import Chunk, EdgeType, NodeType, SourceDocument, TraceStep
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


@dataclass
class Retriever:
    view: IndexView
    config: ToG3Config
    llm: LLM | None  # None: retrieval only, without keyword expansion

    def _types(self) -> list[str]:
        types = [NodeType.CHUNK, NodeType.TRIPLET]
        return types + [NodeType.COMMUNITY] if self.config.use_communities else types

    async def keywords(self, query: str) -> list[str]:
        if self.llm is None:
            return []
        reply = await self.llm.text([{"role": "user", "content": KEYWORDS.format(
            max_keywords=self.config.max_keywords, query=query)}], step="tog3.keywords", kind="query")
        line = next((ln for ln in reply.splitlines() if "^" in ln), reply.splitlines()[0] if reply else "")
        line = line.split(":", 1)[1] if line.lower().startswith("keywords:") else line
        return [k.strip() for k in line.split("^") if k.strip()][: self.config.max_keywords]

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
        communities to the triplets among their members."""
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
        triplets = store.get_nodes(list(dict.fromkeys(triplet_ids)))
        ends = [t.props.get(k, "") for t in triplets for k in ("subject", "object")]
        names = {n.id: n.text for n in store.get_nodes(ends)}
        for node in triplets:
            s, o = names.get(node.props.get("subject", "")), names.get(node.props.get("object", ""))
            if s and o:
                g.triples.append((s, str(node.props.get("predicate", "")), o))
        g.passages = list(dict.fromkeys(g.passages))
        return g

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


@dataclass
class Constructor:
    retriever: Retriever
    llm: LLM
    config: ToG3Config

    async def evolve(self, sub_query: str, current: Subgraph, trace: list[TraceStep]) -> Subgraph:
        new = await self.retriever.retrieve(sub_query, trace)
        extracted = await self._extract_new_chunks(new.passages, trace)
        merged = Subgraph(passages=list(dict.fromkeys(new.passages + current.passages)),
                          triples=list(dict.fromkeys(current.triples + new.triples + extracted)),
                          communities=list(dict.fromkeys(new.communities + current.communities)))
        merged.passages = merged.passages[: self.config.context_passages]
        return await self._refine(sub_query, merged, trace)

    async def _extract_new_chunks(self, chunk_ids: list[str], trace: list[TraceStep]) -> list[Triple]:
        """Triplets for reached chunks the index has none for, written to the index with provenance."""
        store = self.retriever.view.store
        extractor = LLMTripletExtractor(self.llm, max_triplets=self.config.max_triplets_per_chunk)
        found: list[Triple] = []
        for node in store.get_nodes(chunk_ids):
            if store.edges_of(node.id, EdgeType.MENTIONED_IN):
                continue
            prov = next((p for p in store.provenance(node.id) if p.chunk_id == node.id), None)
            if prov is None:
                continue
            chunk = Chunk(node.id, prov.doc_id, node.text, prov.start or 0, prov.end or len(node.text), 0, 0)
            doc = SourceDocument(prov.doc_id, str(node.props.get("title", "")), node.text, prov.doc_id)
            try:
                extraction = await extractor.extract(doc, chunk)
            except StructuredOutputError as exc:
                trace.append(TraceStep("constructor", "extract.failed", {"chunk": node.id}, {"error": str(exc)}))
                continue
            except LLMUnavailableError:
                raise
            records = extraction_records(chunk, extraction)
            with store.transaction():
                store.add_nodes(records.nodes)
                store.add_edges(records.edges)
                store.add_provenance(records.provenance)
            new = [(t.subject, t.predicate, t.object) for t in extraction.triples]
            found += new
            trace.append(TraceStep("constructor", "extract", {"chunk": node.id}, {"triples": new}))
        return found

    async def _refine(self, query: str, graph: Subgraph, trace: list[TraceStep]) -> Subgraph:
        if not graph.triples:
            return graph
        listing = "\n".join(f"{s} -> {p} -> {o}" for s, p, o in graph.triples)
        reply = await self.llm.text([{"role": "user", "content": REFINE.format(query=query, triples=listing)}],
                                    step="tog3.refine", kind="extraction")
        refined = parse_triples(reply)
        if refined is not None and not refined:  # unparseable: keep the subgraph as it was
            trace.append(TraceStep("constructor", "refine.unparsed", {}, {"reply": reply[:200]}))
            return graph
        refined = refined or []
        before = set(graph.triples)
        trace.append(TraceStep("constructor", "refine", {"query": query}, {
            "removed": [list(t) for t in graph.triples if t not in set(refined)],
            "added": [list(t) for t in refined if t not in before]}))
        graph.triples = refined
        return graph
