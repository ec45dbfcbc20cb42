"""Graph-aware passage retrieval (HippoRAG-style personalized PageRank over entities and passages)
with the entity paths that link the question's seed entities to each retrieved passage."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.graph.local_ppr import local_ppr_vector
from thinkgraph.graph.paths import path_in_tree, targeted_tree
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.graph.topk import top_indices
from thinkgraph.models import NodeType
from thinkgraph.retrieval import seeds as seeding
from thinkgraph.retrieval.evidence import Evidence, passages_from_scores
from thinkgraph.retrieval.fusion import rank_score
from thinkgraph.retrieval.hybrid import PassagePrior
from thinkgraph.retrieval.linking import Link
from thinkgraph.retrieval.second_hop import chain_second, residual_question
from thinkgraph.retrieval.views import IndexView

MAX_PATH_HOPS = 4
MAX_PATH_SEEDS = 3
# The edges one level of a path search may read (ours): paths are shown, not ranked by, so a level
# that would read more (past a hub of a large index) is not searched and farther passages show none.
MAX_PATH_EDGES = 250_000


@dataclass(slots=True)
class Ranking:
    """A passage ranking and how it was made."""

    scores: np.ndarray  # over the passages, in the order of the chunk vectors
    seeds: dict[str, float]  # the reset weights of the walks (entity id -> weight)
    question_seeds: dict[str, float] = field(default_factory=dict)  # the first walk's: what the question names
    residual_question: str | None = None  # the second walk's query, when it is not the question
    chained: str | None = None  # the passage the chain lifted to second place
    walk: str | None = None  # "exact" or "local" once a walk ran


class GraphRetriever:
    name = "ppr"

    def __init__(self, view: IndexView, settings: RetrievalSettings | None = None) -> None:
        self.view = view
        self.settings = settings or RetrievalSettings()

    def seed_entities(self, question: str, query_vec: np.ndarray, links: Sequence[Link]) -> dict[str, float]:
        """First-round reset weights: linked question entities (HippoRAG 1) and, per ``fact_seeds``,
        the entities of the best facts (HippoRAG 2)."""
        s = self.settings
        linked = seeding.linked_seeds(self.view, links)
        use_facts = s.fact_seeds == "always" or (s.fact_seeds == "without_links" and not linked)
        facts = seeding.fact_seeds(self.view, question, query_vec, s, entity_fallback=not linked) if use_facts else {}
        return seeding.merge((facts, 1.0), (linked, s.link_weight))

    def passage_ranking(self, question: str, query_vec: np.ndarray) -> Ranking:
        """Scores of every passage (in the order of the chunk vectors), the seeds the walk used and
        what the second hop did. Without any seed the hybrid passage scores are returned as they are."""
        s = self.settings
        chunks = self.view.vectors(NodeType.CHUNK)
        question_prior = self._prior(question, query_vec)
        rows = self.view.chunk_rows
        links = self.view.entity_linker.link(question) if s.link_entities else []
        first = self.seed_entities(question, query_vec, links)
        prior, support = question_prior.scored(self._seed_passages(first, question_prior))
        ranking = Ranking(prior, first, question_seeds=dict(first))
        ppr = self._walk(ranking.seeds, prior, rows, support) if len(rows) == len(chunks) else None
        if ppr is None:
            return ranking
        ranking.walk = "local" if self.local else "exact"
        hop_prior = prior
        if s.bridge_passages > 0:
            ppr, hop_prior = self._second_round(question, links, ppr, ranking, question_prior)
        if s.dense_mix > 0:
            ppr = s.dense_mix * rank_score(prior) + (1 - s.dense_mix) * rank_score(ppr)
        ranking.scores = chain_second(self.view, ppr, hop_prior) if s.hop_chain else ppr
        if ranking.scores is not ppr:
            ranking.chained = chunks.ids[int(np.flatnonzero(ranking.scores != ppr)[0])]
        return ranking

    @property
    def local(self) -> bool:
        """Whether the walk is local (a prior over candidate passages, push PPR): [retrieval] ``walk``."""
        s = self.settings
        passages = len(self.view.vectors(NodeType.CHUNK))
        return s.walk == "local" or (s.walk == "auto" and passages >= s.local_from_passages)

    def _prior(self, question: str, query_vec: np.ndarray) -> PassagePrior:
        s = self.settings
        candidates = s.prior_candidates if self.local else 0
        return PassagePrior(self.view, question, query_vec, candidates, lexical=s.lexical, dense_weight=s.dense_weight)

    def _seed_passages(self, seeds: dict[str, float], prior: PassagePrior) -> np.ndarray | None:
        """With a local walk, the passages of the seed entities: candidates of the prior whatever their
        own score, so that the walk's seeds and the prior meet there (among passages that read alike,
        the one the seeds reach wins, as with a prior over every passage). Of a seed in more than
        ``seed_passages_max`` passages (a country, a year, a city at a million passages) only that many,
        the best by BM25, so that a hub does not bring tens of thousands of passages to score."""
        if not self.local or not seeds:
            return None
        graph, incidence = self.view.entity_passage_graph, self.view.incidence
        cap = self.settings.seed_passages_max
        found = [incidence.passages_of(row) for row in graph.rows(seeds)]
        found = [rows if rows.shape[0] <= cap else prior.best_lexical(rows, cap) for rows in found]
        return np.concatenate(found) if found else None

    def _second_round(self, question: str, links: Sequence[Link], ppr: np.ndarray, ranking: Ranking,
                      question_prior: PassagePrior) -> tuple[np.ndarray, np.ndarray]:
        """Walk again from the seeds plus the bridge entities of the first walk's best passages, with
        the passage prior of the residual question (``second_hop_query``). Returns the summed walks and
        the second walk's prior; ``ranking`` gets the seeds and the residual question."""
        s = self.settings
        ids = self.view.vectors(NodeType.CHUNK).ids
        best = top_indices(ppr, s.bridge_passages)
        weights = ppr[best] / max(float(ppr[best[0]]), 1e-300)  # relative to the best passage
        bridges = seeding.bridge_seeds(self.view, [(ids[i], float(w)) for i, w in zip(best, weights, strict=True)],
                                       set(ranking.seeds))
        if not bridges:
            return ppr, ranking.scores
        hop = question_prior
        if s.second_hop_query == "residual":
            found = (e for i in best for e in self.view.passage_entities.entities(ids[i]))
            residual = residual_question(question, links, found)
            if residual and residual != question:
                hop = self._prior(residual, self.view.embed_query(residual))
                ranking.residual_question = residual
        both = seeding.merge((ranking.seeds, 1.0), (bridges, s.bridge_weight))
        hop_prior, support = hop.scored(self._seed_passages(both, hop))
        second = self._walk(both, hop_prior, self.view.chunk_rows, support)
        if second is None:
            ranking.residual_question = None
            return ppr, ranking.scores
        ranking.seeds = both
        # Both walks count: the second finds the next hop, the first keeps the question's own passages
        # ahead of their neighbours (each walk is a distribution over the same graph).
        return ppr + second, hop_prior

    def _walk(self, seeds: dict[str, float], prior: np.ndarray, rows: np.ndarray,
              support: np.ndarray | None = None) -> np.ndarray | None:
        """PPR from the seeds plus the passage prior at ``passage_weight``; the passages' scores.
        ``support``: the passages outside which the prior is 0 (None: any)."""
        graph = self.view.entity_passage_graph
        if graph.n == 0 or not seeds:
            return None
        s = self.settings
        if self.local:
            return self._local_walk(seeds, prior, rows, support)
        reset = graph.vector(seeds)
        reset[rows] += s.passage_weight * prior
        if reset.sum() <= 0:
            return None
        scores: np.ndarray = personalized_pagerank(graph.adjacency, reset, damping=s.damping)[rows]
        return scores

    def _local_walk(self, seeds: dict[str, float], prior: np.ndarray, rows: np.ndarray,
                    support: np.ndarray | None) -> np.ndarray | None:
        """Push PPR from a reset made of the seeds and the prior's support alone: at a million passages a
        dense reset (and finding its non-zeros) cost a fifth of the question."""
        s, graph = self.settings, self.view.entity_passage_graph
        candidates = np.flatnonzero(prior) if support is None else support
        found = [(row, weight) for node_id, weight in seeds.items() if (row := graph.index.get(node_id)) is not None]
        seed_rows = np.fromiter((row for row, _ in found), dtype=np.int64, count=len(found))
        seed_mass = np.fromiter((weight for _, weight in found), dtype=np.float64, count=len(found))
        nodes, at = np.unique(np.concatenate([seed_rows, rows[candidates]]), return_inverse=True)
        mass = np.bincount(at, weights=np.concatenate([seed_mass, s.passage_weight * prior[candidates]]),
                           minlength=len(nodes))
        keep = mass > 0  # (masses are non-negative)
        if not keep.any():
            return None
        nodes, mass = local_ppr_vector(self.view.push_graph, nodes[keep], mass[keep], damping=s.damping, eps=s.push_eps)
        passage = self.view.passage_of_row[nodes]
        reached = passage >= 0
        pushed = np.zeros(rows.shape[0], dtype=np.float64)
        pushed[passage[reached]] = mass[reached]
        return pushed

    def retrieve(self, question: str, top_k: int | None = None) -> Evidence:
        top_k = top_k or self.settings.top_k
        chunks = self.view.vectors(NodeType.CHUNK)
        ranking = self.passage_ranking(question, self.view.embed_query(question))
        scores, seeds = ranking.scores, ranking.seeds
        order = top_indices(scores, top_k)
        hits = [(chunks.ids[i], float(scores[i])) for i in order]
        evidence = Evidence(question=question, passages=passages_from_scores(self.view.store, hits),
                            residual_question=ranking.residual_question, chained_passage=ranking.chained,
                            walk=ranking.walk)
        names = {n.id: n.text for n in self.view.store.get_nodes(list(seeds))}
        evidence.seeds = sorted(((e, names.get(e, e), w) for e, w in seeds.items()), key=lambda t: -t[2])
        # paths start from what the question names (its linked entities, or the seeds of its facts),
        # never from a bridge the first walk found: a reader follows them from the question
        asked = sorted(ranking.question_seeds, key=lambda e: -ranking.question_seeds[e])
        self._add_paths(evidence, asked)
        return evidence

    def _add_paths(self, evidence: Evidence, seeds: list[str]) -> None:
        """For each passage, one shortest entity path from a seed to an entity the passage contains."""
        graph = self.view.entity_graph
        seed_rows = graph.rows(seeds)
        if not seed_rows:
            return
        labels = self.view.relation_labels
        targets_of = {p.chunk_id: graph.rows(self.view.passage_entities.entities(p.chunk_id))
                      for p in evidence.passages}
        every_target = [t for targets in targets_of.values() for t in targets]
        trees = {src: targeted_tree(graph.adjacency, src, every_target, max_hops=MAX_PATH_HOPS,
                                    max_edges=MAX_PATH_EDGES) for src in seed_rows[:MAX_PATH_SEEDS]}
        for number, passage in enumerate(evidence.passages, 1):
            targets = targets_of[passage.chunk_id]
            best: list[int] | None = None
            for src, (dist, pred) in trees.items():
                reachable = [t for t in targets if dist[t] <= MAX_PATH_HOPS]
                if not reachable:
                    continue
                nearest = min(reachable, key=lambda t: dist[t])
                if best is None or dist[nearest] < len(best) - 1:
                    best = path_in_tree(pred, dist, src, nearest)
            if best is None:
                continue
            ids = [graph.ids[i] for i in best]
            evidence.path_ids.append(ids)
            evidence.path_passages.append(passage.chunk_id)
            evidence.paths.append([f"[{number}]", *self._render(ids, labels)])

    def _render(self, ids: list[str], labels: dict[tuple[str, str], str]) -> list[str]:
        names = {n.id: n.text for n in self.view.store.get_nodes(ids)}
        parts = [names.get(ids[0], ids[0])]
        if len(ids) == 1:
            # a title entity too: the reader is shown each passage after its document's title. The longer
            # "(in the passage, or its document's title)" cost `ppr` 3 of HotpotQA's first 20 with
            # Qwen2.5-1.5B (64.9 -> 58.3 F1) and won 1 of MuSiQue's (25.3 -> 28.3), the same passages shown
            return [*parts, "(named in the passage)"]
        for a, b in itertools.pairwise(ids):
            label = labels.get((a, b)) or (f"<-{labels[(b, a)]}-" if (b, a) in labels else "~")  # ~: co-occurs
            parts.append(f"-{label}->" if (a, b) in labels else label)
            parts.append(names.get(b, b))
        return parts

