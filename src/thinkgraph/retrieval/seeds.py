"""Reset weights of the personalized PageRank: which entities the walk starts from, and how strongly.

Three sources, each a switch in ``RetrievalSettings``:
- facts (HippoRAG 2): the entities of the facts (triplets) that best match the question;
- linked entities (HippoRAG 1): the index's entities named in the question;
- bridges (second round): entities of the first round's best passages that the question does not
  name, i.e. the answers of the first hop, from which the second hop's passages are reached.
Every weight is divided by the number of passages that contain the entity (a rare entity is more
specific, HippoRAG's node specificity)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.graph.topk import top_indices
from thinkgraph.models import NodeType
from thinkgraph.retrieval.fusion import hybrid_scores
from thinkgraph.retrieval.linking import Link
from thinkgraph.retrieval.views import IndexView


def _specific(view: IndexView, weights: dict[str, float]) -> dict[str, float]:
    count = view.passage_entities.passage_count
    return {e: w / max(count(e), 1) for e, w in weights.items() if w > 0}


def fact_seeds(view: IndexView, question: str, query_vec: np.ndarray, s: RetrievalSettings, *,
               entity_fallback: bool = True) -> dict[str, float]:
    """Entities of the ``s.entity_seeds`` best facts, each taking the fact's normalised score averaged
    over the facts naming it. An index without triplets seeds on the best-matching entity names when
    ``entity_fallback`` (the caller turns it off when linked question entities already seed the
    walk: an entity name close to the whole question is a much weaker signal than a fact, and on
    HotpotQA's model-free index it costs 9 points of R@5 beside the links)."""
    triplets = view.vectors(NodeType.TRIPLET)
    node_type = NodeType.TRIPLET if len(triplets) else NodeType.ENTITY
    source = view.vectors(node_type)
    if not len(source) or s.entity_seeds <= 0 or (node_type == NodeType.ENTITY and not entity_fallback):
        return {}
    raw = source.scores(query_vec)
    bm25 = view.lexical(node_type).scores(question) if s.lexical else None
    fused = hybrid_scores(raw, bm25, s.dense_weight)
    top = [i for i in top_indices(fused, s.entity_seeds)
           if raw[i] >= s.seed_min_cosine or (bm25 is not None and bm25[i] > 0)]
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    if node_type == NodeType.TRIPLET:
        for node in view.store.get_nodes([source.ids[i] for i in top]):
            score = float(fused[source.position[node.id]])
            for key in ("subject", "object"):
                if eid := node.props.get(key):
                    total[eid] = total.get(eid, 0.0) + score
                    count[eid] = count.get(eid, 0) + 1
    else:
        for i in top:
            total[source.ids[i]] = float(fused[i])
            count[source.ids[i]] = 1
    return _specific(view, {e: total[e] / count[e] for e in total})


def linked_seeds(view: IndexView, links: Sequence[Link]) -> dict[str, float]:
    """Entities named in the question (its links), at their link confidence (1 for an exact name)."""
    return _specific(view, {link.entity_id: link.confidence for link in links})


def bridge_seeds(view: IndexView, passages: Sequence[tuple[str, float]], known: set[str]) -> dict[str, float]:
    """Entities of the given (passage, weight) pairs that are not already seeds, each at the best
    weight of a passage containing it."""
    out: dict[str, float] = {}
    for chunk_id, weight in passages:
        for eid in view.passage_entities.entities(chunk_id):
            if eid not in known:
                out[eid] = max(out.get(eid, 0.0), weight)
    return _specific(view, out)


def merge(*parts: tuple[dict[str, float], float]) -> dict[str, float]:
    """Sum of seed weights, each source scaled by its weight."""
    out: dict[str, float] = {}
    for seeds, weight in parts:
        for e, w in seeds.items():
            out[e] = out.get(e, 0.0) + weight * w
    return out
