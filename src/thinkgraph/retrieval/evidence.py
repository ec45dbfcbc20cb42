"""Graph-aware passage retrieval (HippoRAG-style personalized PageRank over entities and passages)
with the entity paths that link the question's seed entities to each retrieved passage."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.graph.paths import path_in_tree, shortest_path_tree
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.models import NodeType
from thinkgraph.retrieval.views import IndexView
from thinkgraph.store.base import GraphStore

MAX_PATH_HOPS = 4
MAX_PATH_SEEDS = 3


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


class GraphRetriever:
    name = "ppr"

    def __init__(self, view: IndexView, settings: RetrievalSettings | None = None) -> None:
        self.view = view
        self.settings = settings or RetrievalSettings()

    def seed_entities(self, query_vec: np.ndarray) -> dict[str, float]:
        """Reset weights of seed entities, after HippoRAG 2: the entities of the best-matching
        triplets (facts) take the fact's min-max-normalised score, divided by the number of passages
        that contain the entity (rare entities are more specific), averaged over the facts naming it.
        An index without triplets seeds on the best-matching entity names the same way."""
        s = self.settings
        triplets = self.view.vectors(NodeType.TRIPLET)
        source = triplets if len(triplets) else self.view.vectors(NodeType.ENTITY)
        if not len(source):
            return {}
        scores = _min_max(source.scores(query_vec))
        raw = source.scores(query_vec)
        top = [i for i in np.argsort(-raw, kind="stable")[: s.entity_seeds] if raw[i] >= s.seed_min_cosine]
        total: dict[str, float] = {}
        count: dict[str, int] = {}
        if source is triplets:
            for node in self.view.store.get_nodes([source.ids[i] for i in top]):
                score = float(scores[source.position[node.id]])
                for key in ("subject", "object"):
                    if eid := node.props.get(key):
                        total[eid] = total.get(eid, 0.0) + score
                        count[eid] = count.get(eid, 0) + 1
        else:
            for i in top:
                total[source.ids[i]] = float(scores[i])
                count[source.ids[i]] = 1
        passages_of = self.view.entity_passage_counts
        return {e: total[e] / count[e] / max(passages_of.get(e, 1), 1) for e in total if total[e] > 0}

    def retrieve(self, question: str, top_k: int | None = None) -> Evidence:
        s = self.settings
        top_k = top_k or s.top_k
        query_vec = self.view.embed_query(question)
        chunks = self.view.vectors(NodeType.CHUNK)
        graph = self.view.entity_passage_graph
        dense = chunks.scores(query_vec)
        seeds = self.seed_entities(query_vec)
        reset = graph.vector(seeds)
        reset += s.passage_weight * graph.vector(dict(zip(chunks.ids, _min_max(dense).tolist(), strict=True)))
        if reset.sum() <= 0 or graph.n == 0:
            hits = chunks.search(query_vec, top_k)
            return Evidence(question=question, passages=passages_from_scores(self.view.store, hits))
        scores = personalized_pagerank(graph.adjacency, reset, damping=s.damping)
        ppr_scores = scores[np.array(graph.rows(chunks.ids))]
        if s.dense_mix > 0:
            combined = s.dense_mix * _rank_score(dense) + (1 - s.dense_mix) * _rank_score(ppr_scores)
        else:
            combined = ppr_scores
        order = np.argsort(-combined, kind="stable")[:top_k]
        hits = [(chunks.ids[i], float(combined[i])) for i in order]
        evidence = Evidence(question=question, passages=passages_from_scores(self.view.store, hits))
        names = {n.id: n.text for n in self.view.store.get_nodes(list(seeds))}
        evidence.seeds = sorted(((e, names.get(e, e), w) for e, w in seeds.items()), key=lambda t: -t[2])
        self._add_paths(evidence, [e for e, _, _ in evidence.seeds])
        return evidence

    def _add_paths(self, evidence: Evidence, seeds: list[str]) -> None:
        """For each passage, one shortest entity path from a seed to an entity the passage contains."""
        graph = self.view.entity_graph
        seed_rows = graph.rows(seeds)
        if not seed_rows:
            return
        labels = self.view.relation_labels
        trees = {src: shortest_path_tree(graph.adjacency, src) for src in seed_rows[:MAX_PATH_SEEDS]}
        for passage in evidence.passages:
            targets = graph.rows(self.view.chunk_entities.get(passage.chunk_id, []))
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
            number = evidence.passages.index(passage) + 1
            evidence.paths.append([f"[{number}]", *self._render(ids, labels)])

    def _render(self, ids: list[str], labels: dict[tuple[str, str], str]) -> list[str]:
        names = {n.id: n.text for n in self.view.store.get_nodes(ids)}
        parts = [names.get(ids[0], ids[0])]
        if len(ids) == 1:
            return [*parts, "(named in the passage)"]
        for a, b in itertools.pairwise(ids):
            label = labels.get((a, b)) or (f"<-{labels[(b, a)]}-" if (b, a) in labels else "~")  # ~: co-occurs
            parts.append(f"-{label}->" if (a, b) in labels else label)
            parts.append(names.get(b, b))
        return parts


def _min_max(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    low, high = values.min(), values.max()
    return np.ones_like(values) if high - low < 1e-12 else (values - low) / (high - low)


def _rank_score(values: np.ndarray) -> np.ndarray:
    """Reciprocal-rank style score in (0, 1]: robust to the very different scales of cosine and PPR."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    return 1.0 / (ranks + 60.0) * 61.0
