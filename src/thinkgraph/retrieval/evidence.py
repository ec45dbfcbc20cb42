"""What retrievers return: scored passages with their provenance, and the seeds and entity paths
of graph-aware retrieval."""

from __future__ import annotations

from dataclasses import dataclass, field

from thinkgraph.store.base import GraphStore


@dataclass(slots=True)
class ScoredPassage:
    chunk_id: str
    doc_id: str
    title: str
    text: str
    score: float
    start: int | None = None
    end: int | None = None


@dataclass(slots=True)
class Evidence:
    question: str
    passages: list[ScoredPassage] = field(default_factory=list)
    seeds: list[tuple[str, str, float]] = field(default_factory=list)  # (entity id, name, weight)
    paths: list[list[str]] = field(default_factory=list)  # readable: name, -predicate->, name, ...
    path_ids: list[list[str]] = field(default_factory=list)
    path_passages: list[str] = field(default_factory=list)  # the chunk id each path leads to
    residual_question: str | None = None  # ppr's second walk asked this (retrieval/second_hop.py)
    chained_passage: str | None = None  # ppr's chain put this passage second
    walk: str | None = None  # ppr's walk: "exact" or "local" ([retrieval] walk), None when no seed walked


def passages_from_scores(store: GraphStore, hits: list[tuple[str, float]]) -> list[ScoredPassage]:
    nodes = {n.id: n for n in store.get_nodes([cid for cid, _ in hits])}
    out: list[ScoredPassage] = []
    for cid, score in hits:
        node = nodes.get(cid)
        if node is None:
            continue
        prov = next((p for p in store.provenance(cid) if p.chunk_id == cid), None)
        out.append(ScoredPassage(chunk_id=cid, doc_id=str(node.props.get("doc_id", prov.doc_id if prov else "")),
                                 title=str(node.props.get("title", "")), text=node.text, score=float(score),
                                 start=prov.start if prov else None, end=prov.end if prov else None))
    return out
