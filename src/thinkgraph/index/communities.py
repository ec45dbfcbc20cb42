"""Hierarchical Leiden communities over the entity graph, with summaries when an LLM is set."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from thinkgraph.errors import BudgetExceededError, LLMError, StructuredOutputError
from thinkgraph.graph.leiden import Community, hierarchical_leiden, modularity
from thinkgraph.index.community_state import Fingerprints, fingerprints
from thinkgraph.index.community_update import Layout, new_state, place, read_previous, warm_start
from thinkgraph.index.community_write import members_changed, write_communities
from thinkgraph.index.stages import StageTimer
from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.llm.service import LLM, Message
from thinkgraph.models import EdgeType, Node, NodeType
from thinkgraph.store.base import GraphStore

log = logging.getLogger(__name__)

SUMMARY_STEP = "index.community_summary"
ENTITY_GRAPH_EDGES = (EdgeType.OPENREL, EdgeType.CO_OCCURS, EdgeType.SYNONYM)
MAX_LISTED = 30
FALLBACK_NAMES = 8
FALLBACK_RELATIONS = 3

# Structure of ToG-3 Fig. 12: the community's entities and relations in, a concise summary out.
SUMMARY_PROMPT = """Below are the entities of one tightly connected group in a knowledge graph and
the relations among them, each as source -> target -> relation -> description. Write a short summary
(3 to 5 sentences) of this group: name the main entities and bring together what the relation
descriptions say about how they are connected, keeping the most important facts and no repetition.
Use only the information given.

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
    written: int = 0  # communities new or changed in this run (the others were kept as they were)
    modularity: float = 0.0  # of the top level


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
    summary = await llm.text(messages, step=SUMMARY_STEP, kind="summary",
                             usable=lambda reply: not echoes_instructions(reply, SUMMARY_PROMPT))
    if echoes_instructions(summary, SUMMARY_PROMPT):
        raise StructuredOutputError("the community summary repeats the prompt's instructions")
    return summary


@dataclass
class _EntityGraph:
    nodes: list[Node]
    edges: list[tuple[int, int]]
    weights: list[float]
    relations_of: dict[int, list[tuple[int, str, str]]]

    @cached_property
    def fingerprints(self) -> Fingerprints:
        return fingerprints([n.id for n in self.nodes], self.edges, self.weights)


def _entity_graph(store: GraphStore) -> _EntityGraph:
    """Entities sorted by id and edges sorted, so that seeded Leiden sees the same input whatever
    order extraction wrote the graph in. The edges are read as columns (an Edge per row took 2 s of an
    update at 100k passages) and their ends matched to entities through a dict: a binary search over
    the sorted ids as numpy strings took 10 s of the stage at 1M passages, 2.7 times the dict."""
    nodes = sorted(store.iter_nodes(NodeType.ENTITY), key=lambda n: n.id)
    index = {n.id: i for i, n in enumerate(nodes)}
    src, dst, weight = store.edge_columns(ENTITY_GRAPH_EDGES)
    a, b = _positions(index, src), _positions(index, dst)
    w = np.asarray(weight, dtype=np.float64)
    keep = (a >= 0) & (b >= 0) & (a != b)
    a, b, w = a[keep], b[keep], w[keep]
    order = np.lexsort((w, b, a))
    relations_of: dict[int, list[tuple[int, str, str]]] = {}
    for e in store.iter_edges([EdgeType.OPENREL]):
        i, j = index.get(e.src), index.get(e.dst)
        if i is not None and j is not None and i != j:
            relations_of.setdefault(i, []).append((j, str(e.props.get("predicate", "")),
                                                   str(e.props.get("description", ""))))
    for rels in relations_of.values():
        rels.sort()
    return _EntityGraph(nodes, list(zip(a[order].tolist(), b[order].tolist(), strict=True)), w[order].tolist(),
                        relations_of)


def _positions(index: dict[str, int], names: list[str]) -> npt.NDArray[np.int64]:
    """Each name's position in ``index``, -1 where it is not there."""
    return np.fromiter((index.get(name, -1) for name in names), dtype=np.int64, count=len(names))


async def build_communities(store: GraphStore, *, max_cluster_size: int, seed: int, llm: LLM | None = None,
                            timer: StageTimer | None = None, warm: bool = True) -> CommunityReport:
    """Leiden (in a worker thread; updated from the last partition where the graph changed unless
    ``warm`` is False), then LLM summaries of the communities that are new or whose members changed,
    then one transaction that writes only what changed (index/community_write.py). Rewritten community
    nodes are left without vectors: the embedding worker encodes them with whatever else it still has
    queued (derived.py)."""
    timer = timer or StageTimer()
    with timer.stage("communities (Leiden)"):
        graph = await asyncio.to_thread(_entity_graph, store)
        entity_ids = [n.id for n in graph.nodes]
        before = await asyncio.to_thread(read_previous, store, entity_ids)
        start, baseline = warm_start(before, entity_ids, graph.fingerprints, warm)
        found = await asyncio.to_thread(hierarchical_leiden, len(graph.nodes), graph.edges, graph.weights,
                                        max_cluster_size=max_cluster_size, seed=seed, warm=start)
        layout = Layout(before)
        placement = place(found, before, layout, entity_ids, keep_ids=warm)
    entity_nodes, relations_of = graph.nodes, graph.relations_of
    ids = placement.ids
    summaries: dict[str, str] = {}
    failures = 0
    changed = members_changed(found, placement, layout, before)
    if llm is not None:
        todo = [(cid, c) for cid, c, moved in zip(ids, found, changed, strict=True)
                if moved or not before.nodes.get(cid, Node("", "", "")).props.get("summarized")]
        with timer.stage("community summaries (LLM)"):
            failures = await _summarize_all(llm, todo, entity_nodes, relations_of, summaries)

    def text_of(i: int) -> str:
        members = [entity_nodes[m] for m in found[i].members]
        return summaries.get(ids[i]) or _fallback_text(members, _relations(found[i].members, entity_nodes,
                                                                           relations_of))

    with timer.stage("communities (write)"):
        state = new_state(entity_ids, graph.fingerprints, baseline, found, ids)
        written = await asyncio.to_thread(write_communities, store, found, placement, changed, before, layout,
                                          entity_ids, text_of, summaries, state)
    levels = 1 + max((c.level for c in found), default=-1)
    return CommunityReport(len(found), levels, len(summaries), failures, written.nodes,
                           _top_modularity(graph, found))


def _top_modularity(graph: _EntityGraph, found: list[Community]) -> float:
    return modularity(len(graph.nodes), graph.edges, graph.weights, [c.members for c in found if c.level == 0])


def _relations(members: tuple[int, ...], nodes: list[Node], relations_of: dict[int, list[tuple[int, str, str]]],
               *, described: bool = False) -> list[str]:
    """The relations among the members: "A p B", or with ``described`` ToG-3's Fig. 12 form
    "A -> B -> p -> description" (the description left out when extraction gave none)."""
    inside = set(members)
    out: list[str] = []
    for a in members:
        for b, p, description in relations_of.get(a, ()):
            if b not in inside:
                continue
            if described:
                out.append(f"{nodes[a].text} -> {nodes[b].text} -> {p}" + (f" -> {description}" if description else ""))
            else:
                out.append(f"{nodes[a].text} {p} {nodes[b].text}")
    return out


async def _summarize_all(llm: LLM, todo: list[tuple[str, Community]], nodes: list[Node],
                         relations_of: dict[int, list[tuple[int, str, str]]], summaries: dict[str, str]) -> int:
    """Every summary call at once (the LLM's semaphore bounds them). Returns the count of failed
    summaries (counted, logged, never fatal); a spent budget or a bug stops the stage."""
    async def one(c: Community) -> str:
        members = [nodes[m] for m in c.members]
        return await _summarize(llm, members, _relations(c.members, nodes, relations_of, described=True))

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
