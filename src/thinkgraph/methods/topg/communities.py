"""Hierarchical Leiden communities of the proposition graph (ToPG Global mode, step 5), computed once
per version of the graph and kept in the index's meta table, so that global queries do not recompute
them. The key is a fingerprint of the graph Leiden runs on (proposition ids, connectors, incidence)
and the size bound: any change to the index's propositions, entities or passages gives a new key,
whether or not the index's `generation` counter moved, and only the latest entry is kept."""

from __future__ import annotations

import hashlib
import json
import logging

from thinkgraph.graph.leiden import hierarchical_leiden
from thinkgraph.methods.topg.graph import PropositionGraph
from thinkgraph.store.base import GraphStore

log = logging.getLogger(__name__)

META_KEY = "topg.communities"
CACHE_FORMAT = 2  # 2: every node of a community (1 kept its propositions only)


def graph_fingerprint(graph: PropositionGraph) -> str:
    incidence = graph.incidence.tocsr(copy=True)
    incidence.sort_indices()
    digest = hashlib.sha256()
    for part in ("\n".join(graph.ids), "\n".join(graph.connectors)):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    digest.update(incidence.indptr.astype("int64").tobytes())
    digest.update(incidence.indices.astype("int64").tobytes())
    return digest.hexdigest()


def proposition_communities(graph: PropositionGraph, store: GraphStore, max_size: int) -> list[list[int]]:
    """Every community of G as the sorted list of its nodes (proposition rows below ``graph.n``,
    connector j as ``graph.n + j``), from the cache when the graph is unchanged, else computed and
    cached."""
    key = f"{CACHE_FORMAT}:{graph_fingerprint(graph)}:{max_size}"
    raw = store.get_meta(META_KEY)
    if raw:
        cached = json.loads(raw)
        if cached.get("key") == key:
            return [[int(m) for m in members] for members in cached["communities"]]
    coo = graph.incidence.tocoo()
    edges = [(int(r), graph.n + int(c)) for r, c in zip(coo.row, coo.col, strict=True)]
    found = hierarchical_leiden(graph.n + len(graph.connectors), edges, max_cluster_size=max_size)
    communities = [sorted(int(m) for m in c.members) for c in found]
    if store.read_only:  # a read-only index answers but keeps nothing
        return communities
    store.set_meta(META_KEY, json.dumps({"key": key, "communities": communities}, separators=(",", ":")))
    log.info("topg: %d communities computed and cached for this version of the index", len(communities))
    return communities
