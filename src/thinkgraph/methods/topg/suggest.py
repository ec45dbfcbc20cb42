"""The Suggest step (ToPG §2.2-2.3): naive (top-k by cosine) and query-and-graph-aware
(GExtract subgraph, query-aware transition M, PPR seeded on the current pool, top-k new)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.graph.proposition import query_aware_transition, structural_transition
from thinkgraph.graph.walks import rwr_subgraph
from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.graph import PropositionGraph


class Suggester:
    def __init__(self, graph: PropositionGraph, config: ToPGConfig | None = None) -> None:
        self.graph = graph
        self.config = config or ToPGConfig()
        self._structural = structural_transition(graph.incidence) if graph.n else None

    def naive(self, query_vec: np.ndarray, k: int | None = None) -> list[int]:
        """SuggestNaive_k(q, G, {}): the k propositions most similar to the query."""
        hits = self.graph.vectors.search(query_vec, k or self.config.k)
        return [self.graph.index[pid] for pid, _ in hits]

    def extract_subgraph(self, seeds: Sequence[int]) -> np.ndarray:
        """GExtract: random walk with restart from the seeds over T_s, to at most l propositions."""
        return rwr_subgraph(self._structural, list(seeds), self.config.subgraph_size, restart=self.config.restart)

    def local(self, query_vec: np.ndarray, pool: Sequence[int], k: int | None = None) -> list[int]:
        """S_new = top_k(PPR(M, s_old)) on the GExtract subgraph around the pool (eq. 3), new nodes only."""
        c = self.config
        k = k or c.k
        if not pool or self.graph.n == 0:
            return self.naive(query_vec, k)
        sub = self.extract_subgraph(pool)
        cosine = self.graph.vectors.vectors[sub] @ np.asarray(query_vec, dtype=np.float32)
        m = query_aware_transition(self.graph.incidence[sub], cosine, lam=c.lam, theta=c.theta, tau=c.tau)
        position = {int(node): i for i, node in enumerate(sub)}
        personalization = np.zeros(len(sub))
        for node in pool:
            if node in position:
                personalization[position[node]] = 1.0
        scores = personalized_pagerank(None, personalization, damping=c.damping, transition=m)
        taken = set(pool)
        ranked = [int(sub[i]) for i in np.argsort(-scores, kind="stable") if int(sub[i]) not in taken]
        return ranked[:k]

    def passages_of(self, propositions: Sequence[int]) -> list[str]:
        """Chunks of the propositions, in proposition order, without repeats."""
        out: list[str] = []
        seen: set[str] = set()
        for p in propositions:
            for chunk in self.graph.passages[p]:
                if chunk not in seen:
                    seen.add(chunk)
                    out.append(chunk)
        return out
