"""The Suggest step (ToPG §2.2-2.3): naive (top-k by cosine) and query-and-graph-aware
(GExtract subgraph, query-aware transition M, PPR seeded on the current pool, top-k new)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.graph.proposition import query_aware_transition, semantic_weights
from thinkgraph.graph.walks import push_subgraph
from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.graph import PropositionGraph

# GExtract's push tolerance, per proposition of the target size l (ours; the paper names RWR and l
# only). The walk with restart over G is approximated by residual push, whose work depends on the
# tolerance and not on the graph's size: the exact walk (power iteration over T_s) took over 100 ms per
# call on MuSiQue's 17k-proposition graph. At eps = 1 / (32 l) (6e-5 for l = 500), with SuggestNaive
# pools of the dev questions, Suggest-local's top 20 hold 98% (MuSiQue) and 97% (HotpotQA) of those
# on the exact walk's subgraph, and its top 10 99% of those of a push 8 times finer at half its time.
PUSH_EPS_SCALE = 32
# Tolerance of the PPR on M (ours): only the top k of pi is read. At 1e-4 rather than the solver's
# 1e-6, Suggest-local's top 10 hold 99.8-99.9% of the same propositions on the dev questions, 10-20%
# faster.
SUGGEST_PPR_TOL = 1e-4


class Suggester:
    def __init__(self, graph: PropositionGraph, config: ToPGConfig | None = None) -> None:
        self.graph = graph
        self.config = config or ToPGConfig()

    def naive(self, query_vec: np.ndarray, k: int | None = None, exclude: Collection[int] = ()) -> list[int]:
        """SuggestNaive_k(q, G, {}): the k propositions most similar to the query (none of ``exclude``)."""
        k = k or self.config.k
        hits = self.graph.vectors.search(query_vec, k + len(exclude))
        return [row for pid, _ in hits if (row := self.graph.index[pid]) not in exclude][:k]

    def extract_subgraph(self, seeds: Sequence[int]) -> np.ndarray:
        """GExtract: a random walk with restart from the seeds over G (propositions, entities and
        passages), keeping at most l propositions: the seeds, then the best scored."""
        size = self.config.subgraph_size
        return push_subgraph(self.graph.walk_graph, list(seeds), size, restart=self.config.restart,
                             eps=1.0 / (PUSH_EPS_SCALE * size), limit=self.graph.n)

    def local(self, query_vec: np.ndarray, pool: Sequence[int], k: int | None = None,
              exclude: Collection[int] = ()) -> list[int]:
        """S_new = top_k(PPR(M, s_pool)) on the GExtract subgraph around the pool (eqs. 3, 8): the k
        best propositions that are neither in the pool nor in ``exclude`` (those already collected),
        best first. An empty pool gives SuggestNaive's."""
        c = self.config
        k = k or c.k
        taken = set(pool) | set(exclude)
        if not pool or self.graph.n == 0:
            return self.naive(query_vec, k, taken)
        sub = self.extract_subgraph(pool)
        cosine = self.graph.vectors.vectors[sub] @ np.asarray(query_vec, dtype=np.float32)
        m = query_aware_transition(self.graph.incidence[sub], cosine, lam=c.lam, theta=c.theta, tau=c.tau)
        personalization = np.isin(sub, np.asarray(list(pool), dtype=np.int64)).astype(np.float64)
        scores = personalized_pagerank(None, personalization, damping=c.damping, transition=m, tol=SUGGEST_PPR_TOL)
        ranked = [int(sub[i]) for i in np.argsort(-scores, kind="stable") if int(sub[i]) not in taken]
        return ranked[:k]

    def rank_collected(self, query_vec: np.ndarray, collected: Sequence[int]) -> list[int]:
        """The collected propositions best first for the reader (``reader_order = "walk"``, ours): PPR on
        the query-aware transition M among them alone, restarting at each in proportion to c~ (eq. 6),
        so that a fact close to the question and one that the walk reaches from such facts through a
        shared entity (the next hop) rank above the unconnected ones a lax Select kept. Where no fact
        passes theta, the restart is uniform and the walk alone ranks; ties keep the collected order."""
        c = self.config
        rows = np.asarray(list(dict.fromkeys(collected)), dtype=np.int64)
        if len(rows) < 2:
            return [int(r) for r in rows]
        cosine = self.graph.vectors.vectors[rows] @ np.asarray(query_vec, dtype=np.float32)
        m = query_aware_transition(self.graph.incidence[rows].astype(np.float64), cosine, lam=c.lam,
                                   theta=c.theta, tau=c.tau)
        restart = semantic_weights(cosine, c.theta, c.tau)
        if not restart.any():
            restart = np.ones(len(rows))
        scores = personalized_pagerank(None, restart, damping=c.damping, transition=m, tol=SUGGEST_PPR_TOL)
        return [int(rows[i]) for i in np.argsort(-scores, kind="stable")]

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
