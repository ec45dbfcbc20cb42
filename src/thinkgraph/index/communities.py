"""Hierarchical Leiden communities over the entity graph, with summaries when an LLM is set."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from thinkgraph.errors import BudgetExceededError, LLMError
from thinkgraph.graph.leiden import Community, hierarchical_leiden
from thinkgraph.ids import community_id
from thinkgraph.index.stages import StageTimer
from thinkgraph.llm.service import LLM, Message
from thinkgraph.models import Edge, EdgeType, Node, NodeType
from thinkgraph.store.base import GraphStore

log = logging.getLogger(__name__)

SUMMARY_STEP = "index.community_summary"
ENTITY_GRAPH_EDGES = (EdgeType.OPENREL, EdgeType.CO_OCCURS, EdgeType.SYNONYM)
MAX_LISTED = 30
FALLBACK_NAMES = 8
FALLBACK_RELATIONS = 3

# Structure of ToG-3 Fig. 12: the community's entities and relations in, a concise summary out.
SUMMARY_PROMPT = """Below are entities and relations that form one tightly connected group in a
knowledge graph. Write a short summary (3 to 5 sentences) of what this group is about: the main
entities, how they relate, and the key facts. Use only the information given.

Entities:
{entities}

Relations:
{relations}

Summary:"""


@dataclass(frozen=True, slots=True)
class CommunityReport:
    communities: int
    levels: int
    summarized: int
    summary_failures: int


def _describe(members: list[Node], relations: list[str]) -> tuple[str, str]:
    entities = "\n".join(
        f"- {n.text}" + (f" ({n.props['type']})" if n.props.get("type") else "")
        + (f": {n.props['description']}" if n.props.get("description") else "")
        for n in members[:MAX_LISTED])
    return entities, "\n".join(f"- {r}" for r in relations[:MAX_LISTED]) or "- (none)"


def _fallback_text(members: list[Node], relations: list[str]) -> str:
    """Without an LLM a community is described by its best-connected members and a few relations;
    kept short because every community is embedded (long texts dominate indexing time on a CPU)."""
    names = ", ".join(n.text for n in members[:FALLBACK_NAMES])
    more = f" and {len(members) - FALLBACK_NAMES} more" if len(members) > FALLBACK_NAMES else ""
    rel = "; ".join(relations[:FALLBACK_RELATIONS])
    return f"Group of {len(members)} entities: {names}{more}." + (f" Relations: {rel}." if rel else "")


async def _summarize(llm: LLM, members: list[Node], relations: list[str]) -> str:
    entities, rels = _describe(members, relations)
    messages: list[Message] = [{"role": "user", "content": SUMMARY_PROMPT.format(entities=entities,
                                                                                relations=rels)}]
    return await llm.text(messages, step=SUMMARY_STEP, kind="summary")


@dataclass(slots=True)
class _EntityGraph:
    nodes: list[Node]
    edges: list[tuple[int, int]]
    weights: list[float]
    relations_of: dict[int, list[tuple[int, str]]]


def _entity_graph(store: GraphStore) -> _EntityGraph:
    """Entities sorted by id and edges sorted, so that seeded Leiden sees the same input whatever
    order extraction wrote the graph in."""
    nodes = sorted(store.iter_nodes(NodeType.ENTITY), key=lambda n: n.id)
    index = {n.id: i for i, n in enumerate(nodes)}
    weighted: list[tuple[int, int, float]] = []
    relations_of: dict[int, list[tuple[int, str]]] = {}
    for e in store.iter_edges(ENTITY_GRAPH_EDGES):
        a, b = index.get(e.src), index.get(e.dst)
        if a is None or b is None or a == b:
            continue
        weighted.append((a, b, float(e.weight)))
        if e.type == EdgeType.OPENREL:
            relations_of.setdefault(a, []).append((b, str(e.props.get("predicate", ""))))
    weighted.sort()
    for rels in relations_of.values():
        rels.sort()
    return _EntityGraph(nodes, [(a, b) for a, b, _ in weighted], [w for _, _, w in weighted], relations_of)


async def build_communities(store: GraphStore, *, max_cluster_size: int, seed: int, llm: LLM | None = None,
                            timer: StageTimer | None = None) -> CommunityReport:
    """Leiden (in a worker thread), then LLM summaries of new communities, then one transaction
    replacing the community layer. New community nodes are left without vectors: the embedding
    worker encodes them with whatever else it still has queued (derived.py)."""
    timer = timer or StageTimer()
    with timer.stage("communities (Leiden)"):
        graph = await asyncio.to_thread(_entity_graph, store)
        found = await asyncio.to_thread(hierarchical_leiden, len(graph.nodes), graph.edges, graph.weights,
                                        max_cluster_size=max_cluster_size, seed=seed)
    entity_nodes, relations_of = graph.nodes, graph.relations_of
    ids = [community_id(c.level, [entity_nodes[m].id for m in c.members]) for c in found]
    existing = {n.id: n for n in store.iter_nodes(NodeType.COMMUNITY)}
    summaries: dict[str, str] = {}
    failures = 0
    if llm is not None:
        todo = [(cid, c) for cid, c in zip(ids, found, strict=True)
                if not existing.get(cid, Node("", "", "")).props.get("summarized")]
        with timer.stage("community summaries (LLM)"):
            failures = await _summarize_all(llm, todo, entity_nodes, relations_of, summaries)
    with timer.stage("communities (write)"):
        await asyncio.to_thread(_write, store, ids, found, entity_nodes, relations_of, existing, summaries)
    levels = 1 + max((c.level for c in found), default=-1)
    return CommunityReport(len(found), levels, len(summaries), failures)


def _write(store: GraphStore, ids: list[str], found: list[Community], entity_nodes: list[Node],
           relations_of: dict[int, list[tuple[int, str]]], existing: dict[str, Node],
           summaries: dict[str, str]) -> None:
    wanted = set(ids)
    with store.transaction():
        for cid in sorted(set(existing) - wanted):
            store.delete_node(cid)
        store.delete_edges_of_type(EdgeType.SUMMARY_FOR)
        store.delete_edges_of_type(EdgeType.CHILD_OF)
        new_nodes: list[Node] = []
        new_edges: list[Edge] = []
        for cid, c in zip(ids, found, strict=True):
            members = [entity_nodes[m] for m in c.members]
            if cid not in existing or cid in summaries:
                rels = _relations(c.members, entity_nodes, relations_of)
                text = summaries.get(cid) or _fallback_text(members, rels)
                node = Node(cid, NodeType.COMMUNITY, text, {"level": c.level, "size": len(members),
                                                            "summarized": cid in summaries})
                if cid in existing:
                    store.delete_node(cid)
                new_nodes.append(node)
            new_edges.extend(Edge(cid, m.id, EdgeType.SUMMARY_FOR) for m in members)
            if c.parent is not None:
                new_edges.append(Edge(cid, ids[c.parent], EdgeType.CHILD_OF))
        store.add_nodes(new_nodes)
        store.add_edges(new_edges)


def _relations(members: tuple[int, ...], nodes: list[Node],
               relations_of: dict[int, list[tuple[int, str]]]) -> list[str]:
    inside = set(members)
    return [f"{nodes[a].text} {p} {nodes[b].text}" for a in members for b, p in relations_of.get(a, ())
            if b in inside]


async def _summarize_all(llm: LLM, todo: list[tuple[str, Community]], nodes: list[Node],
                         relations_of: dict[int, list[tuple[int, str]]], summaries: dict[str, str]) -> int:
    """Every summary call at once (the LLM's semaphore bounds them). Returns the count of failed
    summaries (counted, logged, never fatal); a spent budget or a bug stops the stage."""
    async def one(c: Community) -> str:
        members = [nodes[m] for m in c.members]
        return await _summarize(llm, members, _relations(c.members, nodes, relations_of))

    results = await asyncio.gather(*(one(c) for _, c in todo), return_exceptions=True)
    failures = 0
    for (cid, _), result in zip(todo, results, strict=True):
        if isinstance(result, BaseException) and (isinstance(result, BudgetExceededError)
                                                  or not isinstance(result, LLMError)):
            raise result
        if isinstance(result, str) and result.strip():
            summaries[cid] = result.strip()
        else:
            failures += 1
            log.warning("community summary failed: %s", result)
    return failures
