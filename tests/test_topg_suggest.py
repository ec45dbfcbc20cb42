"""ToPG's proposition graph (from imported OpenIE) and the Suggest step."""

from __future__ import annotations

import numpy as np
import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.methods.topg import PropositionGraph, Suggester, ToPGConfig, build_proposition_graph


@pytest.fixture(scope="module")
def tg(tmp_path_factory: pytest.TempPathFactory) -> ThinkGraph:
    graph = ThinkGraph(tmp_path_factory.mktemp("topg") / "p.db", settings=Settings(), embedder=HashEmbedder())
    graph.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    yield graph
    graph.close()


@pytest.fixture(scope="module")
def pgraph(tg: ThinkGraph) -> PropositionGraph:
    return build_proposition_graph(tg.view)


def row(g: PropositionGraph, text: str) -> int:
    return g.texts.index(text)


def test_openie_triples_become_propositions_with_entities_and_passage(pgraph: PropositionGraph,
                                                                      tg: ThinkGraph) -> None:
    assert pgraph.n == 7 and "Alice Stone founded Acme Corp" in pgraph.texts
    founded = row(pgraph, "Alice Stone founded Acme Corp")
    links = {pgraph.connectors[j] for j in pgraph.incidence[founded].indices}
    names = {n.text for n in tg.store.get_nodes(list(links)) if n.type == "entity"}
    assert names == {"Alice Stone", "Acme Corp"} and len(links) == 3  # two entities and the passage
    (chunk,) = pgraph.passages[founded]
    assert tg.store.get_node(chunk).props["doc_id"] == "c1"


def test_naive_is_top_k_by_cosine(pgraph: PropositionGraph, tg: ThinkGraph) -> None:
    q = tg.view.embed_query("Where is Acme Corp based?")
    ranked = Suggester(pgraph).naive(q, 3)
    expected = np.argsort(-(pgraph.vectors.vectors @ q), kind="stable")[:3].tolist()
    assert ranked == expected


def test_local_suggests_new_connected_propositions(pgraph: PropositionGraph, tg: ThinkGraph) -> None:
    q = tg.view.embed_query("Where was the company founded by Alice Stone based?")
    s = Suggester(pgraph, ToPGConfig(k=3))
    pool = [row(pgraph, "Alice Stone founded Acme Corp")]
    new = s.local(q, pool)
    assert pool[0] not in new and 0 < len(new) <= 3
    assert row(pgraph, "Acme Corp based in Rivertown") in new
    assert row(pgraph, "Moon orbits Earth") not in new  # not connected to the pool
    passages = s.passages_of(pool + new)
    assert len(passages) == len(set(passages))


def test_lambda_trades_structure_for_query_similarity(pgraph: PropositionGraph, tg: ThinkGraph) -> None:
    pool = [row(pgraph, "Acme Corp based in Rivertown")]
    q = tg.view.embed_query("Bob Reed works at Acme Corp")
    semantic = Suggester(pgraph, ToPGConfig(k=1, lam=0.0, theta=-1.0)).local(q, pool)
    assert pgraph.texts[semantic[0]] == "Bob Reed works at Acme Corp"
    structural = Suggester(pgraph, ToPGConfig(k=6, lam=1.0)).local(q, pool)
    assert row(pgraph, "Rivertown lies in Greenland Valley") in structural


def test_gextract_respects_the_size_bound(pgraph: PropositionGraph) -> None:
    s = Suggester(pgraph, ToPGConfig(subgraph_size=3))
    seed = row(pgraph, "Alice Stone founded Acme Corp")
    sub = s.extract_subgraph([seed])
    assert len(sub) <= 3 and seed in sub.tolist()
    assert row(pgraph, "Moon orbits Earth") not in Suggester(pgraph).extract_subgraph([seed]).tolist()


def test_empty_pool_falls_back_to_naive(pgraph: PropositionGraph, tg: ThinkGraph) -> None:
    q = tg.view.embed_query("Moon")
    s = Suggester(pgraph, ToPGConfig(k=2))
    assert s.local(q, []) == s.naive(q, 2)


def test_local_never_suggests_an_excluded_proposition_and_fills_its_k(pgraph: PropositionGraph,
                                                                     tg: ThinkGraph) -> None:
    q = tg.view.embed_query("Where was the company founded by Alice Stone based?")
    s = Suggester(pgraph, ToPGConfig(k=2))
    pool = [row(pgraph, "Alice Stone founded Acme Corp")]
    ranked = s.local(q, pool, 6)
    excluded = set(ranked[:2])
    assert s.local(q, pool, exclude=excluded) == [p for p in ranked if p not in excluded][:2]
    assert not set(s.local(q, [], 6, exclude=excluded)) & excluded  # nor does the empty pool's fallback


def test_rank_collected_is_ppr_on_m_among_the_collected(pgraph: PropositionGraph, tg: ThinkGraph) -> None:
    """reader_order="walk": the collected facts ranked by PPR on M restricted to them, restarting by c~
    (uniform where none passes theta), against networkx's PageRank on the same weighted graph; a fact
    that shares no entity or passage with the others ranks last."""
    import networkx as nx

    from thinkgraph.graph.proposition import query_aware_transition, semantic_weights

    q = tg.view.embed_query("Where was the company founded by Alice Stone based?")
    c = ToPGConfig()
    collected = [row(pgraph, t) for t in ("Moon orbits Earth", "Alice Stone founded Acme Corp",
                                          "Bob Reed works at Acme Corp", "Acme Corp based in Rivertown",
                                          "Rivertown lies in Greenland Valley")]
    ranked = Suggester(pgraph, c).rank_collected(q, collected)
    assert sorted(ranked) == sorted(collected) and ranked[-1] == row(pgraph, "Moon orbits Earth")
    rows = np.asarray(collected)
    cosine = pgraph.vectors.vectors[rows] @ q
    m = query_aware_transition(pgraph.incidence[rows].astype(float), cosine, lam=c.lam, theta=c.theta, tau=c.tau)
    restart = semantic_weights(cosine, c.theta, c.tau)
    restart = restart if restart.any() else np.ones(len(rows))
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(rows)))
    coo = m.tocoo()
    graph.add_weighted_edges_from(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True))
    weights = {i: float(w) for i, w in enumerate(restart)}
    ref = nx.pagerank(graph, alpha=c.damping, personalization=weights, dangling=weights, tol=1e-12)
    at = {int(p): i for i, p in enumerate(rows)}
    scores = [ref[at[p]] for p in ranked]
    assert all(a >= b - 1e-6 for a, b in zip(scores, scores[1:], strict=False))


def test_rank_collected_keeps_one_or_none(pgraph: PropositionGraph, tg: ThinkGraph) -> None:
    q = tg.view.embed_query("Who works at Acme Corp?")
    s = Suggester(pgraph)
    assert s.rank_collected(q, []) == []
    assert s.rank_collected(q, [3, 3]) == [3]
