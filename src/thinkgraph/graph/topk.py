"""The k best entries of a score vector without sorting all of it.

``top_indices(values, k)`` is exactly ``np.argsort(-values, kind="stable")[:k]`` (ties in index order),
in time about n + m log m where m is the number of entries at or above the k-th score: a full sort of
every passage's score was 15 ms a question at 100,000 passages (benchmarks/scale.py), a tenth of
`ppr`'s time there."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# Below this many entries per wanted one a full stable sort is as quick (ours).
_PARTITION_RATIO = 8


def top_indices(values: npt.NDArray[np.floating], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` largest values, best first, ties in index order."""
    n = int(values.shape[0])
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.intp)
    if n > k * _PARTITION_RATIO:
        # a sparse vector (a local walk, BM25 over a few terms): the k best are among its positive
        # entries when there are k of them, and finding those is one pass, not a partition of all
        positive = np.flatnonzero(np.asarray(values) > 0)
        if k <= positive.shape[0] < n // 2:
            return positive[_top_of(np.asarray(values)[positive], k)]
    return _top_of(np.asarray(values), k)


def _top_of(values: npt.NDArray[np.floating], k: int) -> npt.NDArray[np.intp]:
    n = int(values.shape[0])
    negated = -values
    if k * _PARTITION_RATIO >= n:
        return np.argsort(negated, kind="stable")[:k]
    kth = negated[np.argpartition(negated, k - 1)[k - 1]]
    candidates = np.flatnonzero(negated <= kth)  # every tie at the k-th score, in index order
    return candidates[np.argsort(negated[candidates], kind="stable")][:k]
