"""ToPG's entry points into the proposition graph: the propositions that seed Naive, Local and Global
mode, where the paper writes SuggestNaive. ``entry = "suggest_naive"`` (the default, the paper's,
§2.3.1): the k propositions most similar to the question by cosine. ``"ppr_passages"`` (ours) enters
through the project's passage walk: question entity links and fact seeds, PPR over entities and
passages, its second hop (``retrieval/graph.py`` ``GraphRetriever.passage_ranking``, configured by the
``[retrieval]`` section as for ``ppr``); the best propositions of each passage it ranks enter, best
passage first. Either way, what follows (Select, Suggest-local on M, Eval) is the method's own, and
the passages returned are those of the facts it collected, in its own order (method.py).
``"suggest_hybrid"`` (ours, a documented deviation the issue allows) is SuggestNaive with the shared
scoring: the cosine ranking fused by reciprocal rank with BM25 over the propositions' texts and with
the propositions that name an entity the question names (the linker `ppr` uses), the k best entering."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.suggest import Suggester
from thinkgraph.models import NodeType, TraceStep
from thinkgraph.retrieval.fusion import fuse_ranks
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.views import IndexView

SHOWN_SEEDS = 8  # seed entities named in the trace step


@dataclass
class Entry:
    propositions: list[int]
    step: TraceStep  # what ran, for the trace


@dataclass
class EntryPoints:
    view: IndexView
    suggester: Suggester
    config: ToPGConfig
    settings: RetrievalSettings

    def enter(self, question: str, query_vec: np.ndarray, k: int | None = None) -> Entry:
        k = k or self.config.k
        if self.config.entry == "suggest_naive":
            props = self.suggester.naive(query_vec, k)
            return Entry(props, TraceStep("suggester", "suggest.naive", {"k": k, "entry": "suggest_naive"},
                                          {"propositions": len(props)}))
        if self.config.entry == "suggest_hybrid":
            return self._hybrid(question, query_vec, k)
        return self._ppr_passages(question, query_vec, k)

    def _hybrid(self, question: str, query_vec: np.ndarray, k: int) -> Entry:
        """SuggestNaive's cosine ranking fused (reciprocal rank, equal weights) with BM25 over the
        propositions and with the propositions naming a linked question entity (by cosine among them):
        a proposition that shares the question's rare words or its named entity is not lost to one
        whose embedding is merely close."""
        graph = self.suggester.graph
        if graph.n == 0:
            return Entry([], TraceStep("suggester", "suggest.hybrid", {"k": k}, {"propositions": 0}))
        cosine = graph.vectors.vectors @ np.asarray(query_vec, dtype=np.float32)
        lexical = self.view.lexical(graph.kind)
        at = lexical_rows(lexical.ids, graph.index)
        bm25 = np.zeros(graph.n)
        bm25[at[at >= 0]] = lexical.scores(question)[at >= 0]
        links = self.view.entity_linker.link(question) if self.settings.link_entities else []
        named = np.zeros(graph.n, dtype=bool)
        named[list(graph.mentioning(link.entity_id for link in links))] = True
        linked = np.where(named, cosine, -np.inf)
        lists = [cosine] + ([bm25] if bm25.any() else []) + ([linked] if named.any() else [])
        fused = fuse_ranks(lists, [1.0] * len(lists))
        props = [int(i) for i in np.argsort(-fused, kind="stable")[:k]]
        return Entry(props, TraceStep("suggester", "suggest.hybrid", {"k": k, "entry": "suggest_hybrid"},
                                      {"propositions": len(props), "lexical": bool(bm25.any()),
                                       "linked": [link.mention for link in links],
                                       "naming_linked": int(named.sum())}))

    def _ppr_passages(self, question: str, query_vec: np.ndarray, k: int) -> Entry:
        """The passages in the order the shared walk ranks them; from each, up to
        ``entry_per_passage`` propositions (naming a seed entity of the walk first, then by cosine to
        the question), until k propositions are in."""
        graph = self.suggester.graph
        ranking = GraphRetriever(self.view, self.settings).passage_ranking(question, query_vec)
        chunk_ids = self.view.vectors(NodeType.CHUNK).ids
        named = graph.mentioning(ranking.seeds)
        props: list[int] = []
        passages = 0
        for i in np.argsort(-ranking.scores, kind="stable"):
            rows = graph.by_passage.get(chunk_ids[i])
            if not rows:
                continue  # a passage without propositions has no entry point
            cosine = graph.vectors.vectors[rows] @ np.asarray(query_vec, dtype=np.float32)
            order = sorted(range(len(rows)), key=lambda j: (rows[j] not in named, -float(cosine[j])))
            props += [rows[j] for j in order[: self.config.entry_per_passage]][: k - len(props)]
            passages += 1
            if len(props) >= k:
                break
        return Entry(props, self._step(question, k, ranking.seeds, ranking.residual_question, ranking.chained,
                                       passages, len(props)))

    def _step(self, question: str, k: int, seeds: dict[str, float], residual: str | None, chained: str | None,
              passages: int, found: int) -> TraceStep:
        s = self.settings
        links = self.view.entity_linker.link(question) if s.link_entities else []
        best = sorted(seeds, key=lambda e: -seeds[e])[:SHOWN_SEEDS]
        names = {n.id: n.text for n in self.view.store.get_nodes(best)}
        inputs = {"k": k, "entry": "ppr_passages", "per_passage": self.config.entry_per_passage}
        # without a seed entity the shared ranking is the hybrid passage prior the walk would start from
        ranked_by = "the PPR walk" if seeds else "the passage prior (no seed entity: no walk)"
        outputs = {"ranked_by": ranked_by, "linked": [link.mention for link in links],
                   "seeds": [names.get(e, e) for e in best],
                   "residual_question": residual, "chained_passage": chained, "passages": passages,
                   "propositions": found}
        return TraceStep("suggester", "suggest.entry", inputs, outputs)


def lexical_rows(lexical_ids: Sequence[str], index: dict[str, int]) -> np.ndarray:
    """Row of each lexical-index item in the proposition graph (-1: not a proposition of the graph)."""
    return np.fromiter((index.get(i, -1) for i in lexical_ids), dtype=np.int64, count=len(lexical_ids))
