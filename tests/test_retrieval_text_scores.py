"""The hybrid text score of a set of passages among themselves (retrieval/hybrid.py ``text_scores``),
against dense cosines and BM25 scores min-max fused by hand."""

from __future__ import annotations

import numpy as np
import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.retrieval.hybrid import text_scores


@pytest.fixture(scope="module")
def tg(tmp_path_factory: pytest.TempPathFactory) -> ThinkGraph:
    graph = ThinkGraph(tmp_path_factory.mktemp("ts") / "t.db", settings=Settings(), embedder=HashEmbedder())
    graph.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    yield graph
    graph.close()


def minmax(x: np.ndarray) -> np.ndarray:
    span = x.max() - x.min()
    return (x - x.min()) / span if span > 0 else np.ones_like(x)


@pytest.mark.parametrize("weight", [0.7, 0.3, 1.0])
def test_text_scores_fuse_cosine_and_bm25_among_the_given_passages(tg: ThinkGraph, weight: float) -> None:
    question = "Where is the company Alice Stone founded based?"
    chunks = tg.view.vectors("chunk")
    ids = list(chunks.ids)[:4] + ["chunk:missing"]
    got = text_scores(tg.view, question, ids, dense_weight=weight, words=question + " Rivertown")
    rows = [chunks.position[c] for c in ids[:4]]
    dense = chunks.vectors[rows] @ tg.view.embed_query(question)
    bm25 = tg.view.lexical("chunk").scores(question + " Rivertown")[rows]
    expected = weight * minmax(dense) + (1 - weight) * minmax(bm25)
    assert np.allclose(got[:4], expected) and got[4] == -np.inf
    dense_only = text_scores(tg.view, question, ids[:4], lexical=False)
    assert np.allclose(dense_only, minmax(dense))
