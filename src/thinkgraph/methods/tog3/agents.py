"""The Retriever of ToG-3 (keyword expansion, hybrid vector-graph retrieval, reranking) in its two
forms (``ToG3Config.retrieval``): "shared", the project's walk over entities and passages for the
passages beside vector search for triplets and communities, and "paper", vector search over every
node type expanded through the graph and reranked by cosine."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.llm.service import LLM
from thinkgraph.methods.tog3.config import ToG3Config
from thinkgraph.methods.tog3.prompts import KEYWORDS
from thinkgraph.methods.tog3.subgraph import Links, Subgraph, Triple, expand
from thinkgraph.models import NodeType, TraceStep
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.views import IndexView

__all__ = ["Retriever", "Subgraph", "Triple", "parse_keywords", "parse_triples"]
_ARROW = re.compile(r"^\s*(?:[-*\d.)]+\s*)?(.+?)\s*->\s*(.+?)\s*->\s*(.+?)\s*$")


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
    settings: RetrievalSettings = field(default_factory=RetrievalSettings)  # the walk's levers ([retrieval])

    def _types(self) -> list[str]:
        types: list[str] = [NodeType.CHUNK, NodeType.TRIPLET]
        return types + [NodeType.COMMUNITY] if self.config.use_communities else types

    async def keywords(self, query: str) -> list[str]:
        if self.llm is None:
            return []
        reply = await self.llm.text([{"role": "user", "content": KEYWORDS.format(
            max_keywords=self.config.max_keywords, query=query)}], step="tog3.keywords", kind="query")
        if echoes_instructions(reply, KEYWORDS.split("}", 1)[-1], window=6):  # (its words after {max_keywords})
            return []  # the instructions copied (a weak model's): no keyword, the query alone searches
        return parse_keywords(reply)[: self.config.max_keywords]

    async def retrieve(self, query: str, trace: list[TraceStep]) -> Subgraph:
        keywords = await self.keywords(query)
        text = " ".join([query, *keywords])
        vec = self.view.embed_query(text)
        # Each keyword is matched on its own as well (Fig. 13's '^'-separated keywords are search terms,
        # not only words added to one query): a node's score is its best against the query or a keyword.
        vecs = np.vstack([vec, self.view.embedder.embed(keywords)]) if keywords else vec[None, :]
        if self.config.retrieval == "paper":
            top = self._vector_hits(vecs, self._types())
            graph = self.rerank(self._expand(top), vec)
            missing = self.config.context_passages - len(graph.passages)
            if self.config.fill_passages and missing > 0:
                # App. A's 5 passages: when the expansion of the top nodes reached fewer, the chunks nearest
                # the query fill the rest after them (the graph's own passages keep their places)
                near = [nid for _, _, nid in self._vector_hits(vecs, [NodeType.CHUNK]) if nid not in graph.passages]
                graph.passages += near[:missing]
            walk: dict[str, object] = {}
        else:
            top, walk = self._walk_and_vectors(text, vec, vecs)
            graph = self._expand(top)
            # The Reranker is the walk's order (its scores already hold the query's passage prior);
            # the chunks of retrieved triplets rank below the walk's best, so only the walk's count.
            graph.passages = [nid for _, t, nid in top if t == NodeType.CHUNK][: self.config.context_passages]
            graph.triples = graph.triples[: self.config.max_triples_shown]
        trace.append(TraceStep("retriever", "retrieve",
                               {"query": query, "keywords": keywords, "retrieval": self.config.retrieval},
                               {"top_nodes": [nid for _, _, nid in top], **walk, **graph.summary()}))
        return graph

    def _vector_hits(self, vecs: np.ndarray, node_types: list[str]) -> list[tuple[float, str, str]]:
        """The ``top_k`` nodes of the given types closest to the query or to one of its keywords (the
        rows of ``vecs``), each at its best score, best first."""
        best: dict[tuple[str, str], float] = {}
        for node_type in node_types:
            for row in vecs:
                for nid, score in self.view.vectors(node_type).search(row, self.config.top_k):
                    best[(node_type, nid)] = max(best.get((node_type, nid), -1.0), score)
        hits = [(score, node_type, nid) for (node_type, nid), score in best.items()]
        return sorted(hits, reverse=True)[: self.config.top_k]

    def _walk_and_vectors(self, text: str, vec: np.ndarray,
                          vecs: np.ndarray) -> tuple[list[tuple[float, str, str]], dict[str, object]]:
        """The shared form: triplet (and community) nodes by vector search (query and keywords), then
        the passages the walk ranks best for the query with its keywords (``retrieval/graph.py``: the
        keywords reach it as words, BM25 matching them, and as names its linker finds), and what the
        walk did, for the trace."""
        others = self._vector_hits(vecs, [t for t in self._types() if t != NodeType.CHUNK])
        ranking = GraphRetriever(self.view, self.settings).passage_ranking(text, vec)
        chunks = self.view.vectors(NodeType.CHUNK)
        depth = max(self.config.top_k, self.config.context_passages)
        order = np.argsort(-ranking.scores, kind="stable")[:depth]
        passages = [(float(ranking.scores[i]), str(NodeType.CHUNK), chunks.ids[i]) for i in order]
        names = {n.id: n.text for n in self.view.store.get_nodes(list(ranking.seeds))}
        seeds = sorted(ranking.seeds.items(), key=lambda kv: -kv[1])
        walk: dict[str, object] = {"walk": {"seeds": [names.get(e, e) for e, _ in seeds],
                                            "residual_question": ranking.residual_question,
                                            "chained_passage": ranking.chained}}
        return others + passages, walk

    @cached_property
    def links(self) -> Links:
        return Links.of(self.view)

    def _expand(self, top: list[tuple[float, str, str]]) -> Subgraph:
        return expand(self.view.store, self.links, top, self.config.max_triples_shown)

    def rerank(self, graph: Subgraph, vec: np.ndarray) -> Subgraph:
        """The Reranker: passages ordered by similarity to the query, the top ones kept."""
        chunks = self.view.vectors(NodeType.CHUNK)
        scored = [(float(chunks.vectors[chunks.position[c]] @ vec), c) for c in graph.passages if c in chunks.position]
        graph.passages = [c for _, c in sorted(scored, reverse=True)][: self.config.context_passages]
        graph.triples = graph.triples[: self.config.max_triples_shown]
        return graph

    def context(self, graph: Subgraph) -> str:
        """The subgraph as the agents read it: its passages first, then its community summaries, then its
        facts. What stays from one round to the next comes first, so that a server's prompt cache reuses it
        (issue #48): an evolved subgraph mostly keeps its passages (12 of MuSiQue's first 20 kept all five)
        while the Constructor rewrites its triples, and facts first made every round read its passages
        again."""
        store = self.view.store
        parts = []
        for i, node in enumerate(store.get_nodes(graph.passages), 1):
            title = node.props.get("title")
            parts.append(f"Passage {i}: {title + ': ' if title else ''}{node.text}")
        for node in store.get_nodes(graph.communities):
            parts.append(f"Summary: {node.text}")
        if graph.triples:
            parts.append("Facts:\n" + "\n".join(f"{s} -> {p} -> {o}" for s, p, o in graph.triples))
        return "\n\n".join(parts) or "(empty)"
