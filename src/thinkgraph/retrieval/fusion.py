"""Score fusion shared by every retriever: dense and lexical scores live on different scales (cosine
in [-1, 1], BM25 unbounded, PPR probabilities summing to 1), so they are combined after min-max
normalisation or as reciprocal ranks, never raw."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

import numpy as np

H = TypeVar("H", bound=Hashable)

# Reciprocal-rank fusion constant (Cormack et al. 2009): damps the gap between the first ranks.
RRF_K = 60.0


def min_max(values: np.ndarray) -> np.ndarray:
    """Scaled to [0, 1]; a constant vector maps to ones (callers using it as weights keep every item)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    low, high = values.min(), values.max()
    return np.ones_like(values) if high - low < 1e-12 else (values - low) / (high - low)


def rank_score(values: np.ndarray) -> np.ndarray:
    """Reciprocal-rank score in (0, 1] (1 for the best item): robust to the scale of ``values``."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    return (RRF_K + 1.0) / (ranks + RRF_K)


def hybrid_scores(dense: np.ndarray, lexical: np.ndarray | None, dense_weight: float) -> np.ndarray:
    """Convex combination of min-max-normalised dense and BM25 scores. A query with no term in the
    collection (all-zero BM25) leaves the dense scores alone rather than shifting them."""
    dense_n = min_max(dense)
    if lexical is None or dense_weight >= 1.0 or not np.any(lexical > 0):
        return dense_n
    return dense_weight * dense_n + (1.0 - dense_weight) * min_max(lexical)


def fuse_ranks(scores: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Weighted reciprocal-rank fusion of score vectors over the same items."""
    if len(scores) != len(weights) or not scores:
        raise ValueError("fuse_ranks needs one weight per score vector")
    total = np.zeros(len(scores[0]), dtype=np.float64)
    for values, weight in zip(scores, weights, strict=True):
        if weight:
            total += weight * rank_score(values)
    return total / sum(weights)


def interleaved(lists: Sequence[Sequence[H]], limit: int | None = None) -> list[H]:
    """Round-robin fusion: the lists' items in turn (each list's first, then each one's second, ...),
    without repeats, up to ``limit`` (None: all)."""
    out: dict[H, None] = {}
    width = max((len(x) for x in lists), default=0)
    for rank in range(width):
        for items in lists:
            if limit is not None and len(out) >= limit:
                return list(out)
            if rank < len(items):
                out.setdefault(items[rank])
    return list(out)


def filled(own: Sequence[H], walked: Sequence[H], limit: int, share: int) -> list[H]:
    """A reader's ``limit`` items without repeats: ``own`` up to all but ``share`` of them (its first
    always), ``walked`` (a fill's) in the places left, and the rest of ``own`` in any still left;
    ``walked`` takes at least ``share`` places when it has them and ``limit`` leaves them. In the order
    a chain is read: ``own``'s first (the entry), the walk's (where the walk from ``own``'s first items
    leads: the next hop), then ``own``'s others. With the walk's after all of ``own``'s, Qwen2.5-1.5B read the bridge's
    own passage fourth and named another passage's film (docs/answer-quality.md, sixteenth session)."""
    head = list(own[: max(limit - share, 1)])
    chosen = list(dict.fromkeys([*head, *walked, *own]))[:limit]
    entry, fill = (head[:1] if limit > 0 else []), set(walked) - set(head)
    return [*entry, *(x for x in chosen if x in fill), *(x for x in chosen if x not in fill and x not in entry)]
