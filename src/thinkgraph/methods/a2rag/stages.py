"""The three retrieval stages of §III-C as pure functions on the entity graph."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from thinkgraph.graph.paths import k_hop, path_in_tree, shortest_path_tree
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.methods.a2rag.graph import EntityGraph, Fact


def local_facts(graph: EntityGraph, seeds: Collection[int], relations: Collection[str]) -> tuple[list[Fact], bool]:
    """Stage 1 (eq. 7): facts on edges incident to a seed. With relation seeds only matching facts
    are kept; if that keeps none, all are kept (returned flag False) rather than returning nothing."""
    facts: list[Fact] = []
    seen: set[Fact] = set()
    for seed in seeds:
        for fact in graph.incident_facts(seed):
            if fact not in seen:
                seen.add(fact)
                facts.append(fact)
    if relations:
        kept = [f for f in facts if f.predicate in relations]
        if kept:
            return kept, True
    return facts, False


def connects(facts: Collection[Fact], seeds: Collection[int]) -> bool:
    """Whether ``facts`` join every seed into one connected piece (§III-C.2: stage 2 is for when stage 1
    "fails to connect multiple query entities"); one seed or none is connected."""
    parent: dict[int, int] = {}

    def root(node: int) -> int:
        while parent.get(node, node) != node:
            node = parent[node]
        return node

    for fact in facts:
        parent[root(fact.subject)] = root(fact.object)
    return len({root(seed) for seed in seeds}) <= 1


def bridge_facts(graph: EntityGraph, seeds: Collection[int], k: int, max_paths: int,
                 max_bridges: int, relations: Collection[str] = ()) -> tuple[list[int], list[list[int]], list[Fact]]:
    """Stage 2 (eq. 8): bridge nodes within ``k`` hops of at least two seeds, and the facts on up to
    ``max_paths`` shortest paths from each such seed to each bridge. Relation seeds steer the search
    (§IV-E: S_R "suppresses edges inconsistent with the query's relational intent"): among bridges
    reached from as many seeds, those with an incident fact of a seed relation come first.
    Returns (bridges, paths, facts)."""
    seeds = list(seeds)
    if len(seeds) < 2:
        return [], [], []
    reach: dict[int, dict[int, int]] = {s: k_hop(graph.adjacency, [s], k) for s in seeds}
    count: dict[int, list[int]] = {}
    for seed, dist in reach.items():
        for node in dist:
            count.setdefault(node, []).append(seed)
    candidates = [(node, ss) for node, ss in count.items() if len(ss) >= 2]
    wanted = set(relations)

    def steered(node: int) -> int:
        return int(bool(wanted) and any(f.predicate in wanted for f in graph.incident_facts(node)))

    candidates.sort(key=lambda t: (-len(t[1]), -steered(t[0]), sum(reach[s][t[0]] for s in t[1]), t[0]))
    bridges = [node for node, _ in candidates[:max_bridges]]
    paths: list[list[int]] = []
    trees = {s: shortest_path_tree(graph.adjacency, s) for s in seeds}
    for node, reaching in candidates[:max_bridges]:
        for seed in reaching:
            paths.extend(_short_paths(graph, trees[seed], seed, node, max_paths))
    facts: list[Fact] = []
    seen: set[Fact] = set()
    for path in paths:
        for a, b in zip(path, path[1:], strict=False):
            for fact in graph.facts_of(a, b):
                if fact not in seen:
                    seen.add(fact)
                    facts.append(fact)
    return bridges, paths, facts


def _short_paths(graph: EntityGraph, tree: tuple[np.ndarray, np.ndarray], source: int, target: int,
                 limit: int) -> list[list[int]]:
    """Up to ``limit`` shortest paths, differing in their last hop."""
    dist, pred = tree
    if target == source or not np.isfinite(dist[target]):
        return []
    start, end = graph.adjacency.indptr[target], graph.adjacency.indptr[target + 1]
    last_hops = [int(u) for u in graph.adjacency.indices[start:end] if dist[u] == dist[target] - 1][:limit]
    out = []
    for hop in last_hops:
        prefix = path_in_tree(pred, dist, source, hop)
        if prefix is not None:
            out.append([*prefix, target])
    return out


def ppr_map_back(graph: EntityGraph, seeds: Collection[int], alpha: float,
                 top_l: int) -> tuple[list[int], dict[str, float]]:
    """Stage 3 (eqs. 9-12): PPR with p0(u) proportional to 1/deg(u) over the seeds and teleport
    ``alpha``; the top-L nodes are mapped back to the chunks containing them, each chunk scored by the
    PPR mass of its top-L nodes. Returns (top nodes, chunk scores)."""
    seeds = [s for s in seeds if graph.degree[s] > 0] or list(seeds)
    if not seeds or not graph.ids:
        return [], {}
    p0 = np.zeros(len(graph.ids))
    for s in seeds:
        p0[s] = 1.0 / max(graph.degree[s], 1.0)
    scores = personalized_pagerank(graph.adjacency, p0, damping=1.0 - alpha)
    top = [int(i) for i in np.argsort(-scores, kind="stable")[:top_l] if scores[i] > 0]
    chunk_scores: dict[str, float] = {}
    for node in top:
        for chunk in graph.chunks_of[node]:
            chunk_scores[chunk] = chunk_scores.get(chunk, 0.0) + float(scores[node])
    return top, chunk_scores
