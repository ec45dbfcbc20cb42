"""`ppr`'s local walk ([retrieval] walk = local, and auto from local_from_passages passages): the passage
prior over candidates (the best by dense search and by BM25, and the passages of the walk's seeds)
and local push PPR from that sparse reset, against the exact walk on the same corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import CHAIN_DOCS, CHAIN_QUESTION, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.models import EdgeType, NodeType
from thinkgraph.retrieval.fusion import hybrid_scores
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.hybrid import PassagePrior, passage_scores

FILLER = "Keeper {}orwin tended the lamp at Cape {}aldor for years."
DOCS = {**CHAIN_DOCS, **{f"filler{i}.txt": FILLER.format(chr(65 + i), chr(70 + i)) for i in range(12)}}
QUESTION = CHAIN_QUESTION


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("walk")
    docs = folder / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    with ThinkGraph(folder / "w.db", settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([docs])
    return folder / "w.db"


def test_the_candidate_prior_scores_the_union_among_itself(index: Path) -> None:
    with ThinkGraph.open(index, settings=Settings(), embedder=HashEmbedder()) as tg:
        view = tg.view
        chunks = view.vectors(NodeType.CHUNK)
        query = view.embed_query(QUESTION)
        full = passage_scores(view, QUESTION, query)
        assert np.array_equal(PassagePrior(view, QUESTION, query, 0).scores(), full)
        assert np.array_equal(PassagePrior(view, QUESTION, query, len(chunks)).scores(), full)
        extra = np.array([chunks.position[chunks.ids[-1]]])
        prior = PassagePrior(view, QUESTION, query, 3).scores(extra)
        dense, bm25 = chunks.scores(query), view.lexical(NodeType.CHUNK).scores(QUESTION)
        union = set(np.argsort(-dense, kind="stable")[:3].tolist()) | set(extra.tolist()) | \
            {i for i in np.argsort(-bm25, kind="stable")[:3].tolist() if bm25[i] > 0}
        rows = np.array(sorted(union))
        assert set(np.flatnonzero(prior).tolist()) <= union
        assert np.allclose(prior[rows], hybrid_scores(dense[rows], bm25[rows], Settings().retrieval.dense_weight))


def test_the_local_walk_ranks_as_the_exact_one_here_and_says_which_ran(index: Path) -> None:
    with ThinkGraph.open(index, settings=Settings(), embedder=HashEmbedder()) as tg:
        exact = tg.ask(QUESTION, method="ppr", top_k=3, walk="exact")
        local = tg.ask(QUESTION, method="ppr", top_k=3, walk="local", prior_candidates=2)
        assert [c.doc_id for c in local.citations][:2] == [c.doc_id for c in exact.citations][:2] == ["a.txt", "b.txt"]
        assert exact.trace[0].outputs["walk"] == "exact" and local.trace[0].outputs["walk"] == "local"
        # auto: local from local_from_passages passages, exact below
        assert tg.ask(QUESTION, method="ppr", local_from_passages=len(DOCS)).trace[0].outputs["walk"] == "local"
        assert tg.ask(QUESTION, method="ppr", local_from_passages=len(DOCS) + 1).trace[0].outputs["walk"] == "exact"


def test_the_seeds_passages_are_candidates_whatever_their_own_score(index: Path) -> None:
    """Every passage that contains a seed entity of a local walk enters the prior, however its words
    score (at scale the prior's mass drowns the seeds' own, so a passage left out of the prior loses
    to every candidate: 19 points of Recall@5 at 100k generated passages)."""
    settings = Settings()
    settings.retrieval.walk, settings.retrieval.prior_candidates = "local", 1
    with ThinkGraph.open(index, settings=settings, embedder=HashEmbedder()) as tg:
        view = tg.view
        retriever = GraphRetriever(view, settings.retrieval)
        fleet = next(n.id for n in tg.store.iter_nodes(NodeType.ENTITY) if n.text == "Ember Fleet")
        holders = {e.src for e in tg.store.iter_edges([EdgeType.CONTAINS]) if e.dst == fleet}
        chunks = view.vectors(NodeType.CHUNK)
        query = view.embed_query(QUESTION)
        prior = PassagePrior(view, QUESTION, query, 1)
        rows = retriever._seed_passages({fleet: 1.0}, prior)
        assert rows is not None and {chunks.ids[i] for i in rows} == holders and len(holders) == 3
        assert holders <= {chunks.ids[i] for i in prior.candidates(rows)}
        assert len(prior.candidates()) <= 2 and not holders <= {chunks.ids[i] for i in prior.candidates()}
        exact = GraphRetriever(view, settings.retrieval.model_copy(update={"walk": "exact"}))
        assert exact._seed_passages({fleet: 1.0}, prior) is None  # the exact walk's prior covers every passage
        # a seed in more passages than seed_passages_max brings that many, the best by BM25
        capped = GraphRetriever(view, settings.retrieval.model_copy(update={"seed_passages_max": 2}))
        bm25 = view.lexical(NodeType.CHUNK).scores(QUESTION)
        best = sorted((chunks.position[c] for c in holders), key=lambda i: (-bm25[i], i))[:2]
        assert sorted(capped._seed_passages({fleet: 1.0}, prior).tolist()) == sorted(best)


def test_push_from_the_reset_approximates_the_exact_walk(index: Path) -> None:
    """The local walk's scores against the exact PPR of the same reset vector (an independent solver)."""
    with ThinkGraph.open(index, settings=Settings(), embedder=HashEmbedder()) as tg:
        from thinkgraph.graph.local_ppr import local_ppr_vector

        view = tg.view
        graph = view.entity_passage_graph
        reset = np.zeros(graph.n)
        reset[view.chunk_rows[:4]] = [0.5, 0.2, 0.2, 0.1]
        support = np.flatnonzero(reset)
        nodes, mass = local_ppr_vector(view.push_graph, support, reset[support], damping=0.5, eps=1e-7)
        pushed = np.zeros(graph.n)
        pushed[nodes] = mass
        exact = personalized_pagerank(graph.adjacency, reset, damping=0.5, tol=1e-10)
        assert np.abs(pushed - exact).sum() < 1e-3
        assert list(np.argsort(-pushed)[:5]) == list(np.argsort(-exact)[:5])


def test_the_local_reset_is_the_seeds_plus_the_prior_on_its_support(index: Path) -> None:
    """The local walk builds its reset from the seeds and the prior's support alone (no vector over
    every node); it must be the dense reset the exact walk uses, pushed the same way."""
    settings = Settings()
    settings.retrieval.walk, settings.retrieval.prior_candidates = "local", 2
    with ThinkGraph.open(index, settings=settings, embedder=HashEmbedder()) as tg:
        from thinkgraph.graph.local_ppr import local_ppr_vector

        view, s = tg.view, settings.retrieval
        retriever = GraphRetriever(view, s)
        by_name = {n.text: n.id for n in tg.store.iter_nodes(NodeType.ENTITY)}
        seeds = {by_name["Ember Fleet"]: 1.0, by_name[next(iter(by_name))]: 0.25, "not-an-entity": 3.0}
        prior = PassagePrior(view, QUESTION, view.embed_query(QUESTION), 2)
        dense, support = prior.scored(retriever._seed_passages(seeds, prior))
        assert support is not None and set(np.flatnonzero(dense)) <= set(support.tolist())
        graph, rows = view.entity_passage_graph, view.chunk_rows
        reset = graph.vector(seeds)
        reset[rows] += s.passage_weight * dense
        nonzero = np.flatnonzero(reset)
        nodes, mass = local_ppr_vector(view.push_graph, nonzero, reset[nonzero], damping=s.damping, eps=s.push_eps)
        full = np.zeros(graph.n)  # the exact walk's way to the passages' scores: the graph's rows of them
        full[nodes] = mass
        expected = full[rows]
        got = retriever._walk(seeds, dense, rows, support)
        assert got is not None and expected.any()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(retriever._walk(seeds, dense, rows), expected, rtol=1e-12, atol=1e-15)
        assert retriever._walk({"not-an-entity": 1.0}, np.zeros(len(rows)), rows, support[:0]) is None
