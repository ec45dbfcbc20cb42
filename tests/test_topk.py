"""graph/topk.py against the full stable sort it replaces."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from thinkgraph.graph.topk import top_indices


def reference(values: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-values, kind="stable")[:k]


@settings(max_examples=300, deadline=None)
@given(arrays(np.float32, st.integers(0, 400), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, -1.0])),
       st.integers(0, 60))
def test_equals_the_stable_full_sort_with_many_ties(values: np.ndarray, k: int) -> None:
    assert top_indices(values, k).tolist() == reference(values, k).tolist()


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.integers(1, 3000), elements=st.floats(-1e6, 1e6, allow_nan=False, width=64)),
       st.integers(1, 40))
def test_equals_the_stable_full_sort_on_continuous_scores(values: np.ndarray, k: int) -> None:
    assert top_indices(values, k).tolist() == reference(values, k).tolist()


def test_large_vector_takes_the_partition_path() -> None:
    rng = np.random.default_rng(0)
    values = np.round(rng.random(100_000), 3)  # many ties
    assert top_indices(values, 5).tolist() == reference(values, 5).tolist()
    assert top_indices(values, 0).tolist() == []


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(50, 2000), elements=st.sampled_from([0.0] * 12 + [0.5, 1.0, 3.0, -2.0])),
       st.integers(1, 6))
def test_equals_the_stable_full_sort_on_sparse_vectors(values: np.ndarray, k: int) -> None:
    """Mostly zeros, as a local walk's scores: the positive entries' partition, or the full one when
    fewer than k are positive."""
    assert top_indices(values, k).tolist() == reference(values, k).tolist()
