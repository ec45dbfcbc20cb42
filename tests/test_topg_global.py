"""ToPG Global mode: Rocchio queries, Alg. 3 against a step-by-step reference, singleton-seeded walks,
lost-in-the-middle ordering, and a scripted end-to-end run."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.graph.budgeted import greedy_budgeted_communities
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.graph.proposition import query_aware_transition
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.topg import Suggester, ToPGConfig, build_proposition_graph
from thinkgraph.methods.topg.global_mode import GlobalExplorer, lost_in_the_middle, rocchio
from thinkgraph.testing import ScriptedBackend


def test_rocchio_formula_and_simple_feedback() -> None:
    q, h, neg = np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), np.array([0, 0, 1.0])
    out = rocchio(q, h, neg, alpha=1, beta=0.7, gamma=0.15)
    expected = np.array([1, 0.7, -0.15]) / np.linalg.norm([1, 0.7, -0.15])
    np.testing.assert_allclose(out, expected)
    np.testing.assert_allclose(rocchio(q, h, None, alpha=1, beta=0, gamma=0), q)


def test_lost_in_the_middle_puts_the_best_at_both_ends() -> None:
    assert lost_in_the_middle(["1", "2", "3", "4", "5", "6"]) == ["1", "3", "5", "6", "4", "2"]
    assert lost_in_the_middle(["1", "2", "3"]) == ["1", "3", "2"]
    assert lost_in_the_middle([]) == []


def reference_greedy(anchors: set[int], communities: list[set[int]], budget: int) -> list[int]:
    """Alg. 3 written out step by step with exhaustive scans."""
    covered: set[int] = set()
    chosen: list[int] = []
    b = 0
    while covered != anchors and b < budget:
        scores = [(len((c & anchors) - covered) / len(c) if c and i not in chosen else -1.0, -i)
                  for i, c in enumerate(communities)]
        best_score, neg_i = max(scores)
        if best_score <= 0:
            break
        chosen.append(-neg_i)
        covered |= communities[-neg_i] & anchors
        b += len(communities[-neg_i])
    return chosen


def test_greedy_budgeted_matches_reference_on_random_inputs() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        universe = 30
        communities = [set(rng.choice(universe, rng.integers(1, 8), replace=False).tolist()) for _ in range(8)]
        anchors = set(rng.choice(universe, rng.integers(1, 12), replace=False).tolist())
        budget = int(rng.integers(1, 40))
        assert greedy_budgeted_communities(anchors, communities, budget) == reference_greedy(anchors, communities,
                                                                                             budget)


def test_greedy_budgeted_small_cases() -> None:
    communities = [{1, 2, 9, 10}, {1, 2}, {3}, {4, 5, 6, 7}]
    assert greedy_budgeted_communities({1, 2, 3}, communities, 100) == [1, 2]  # ratio 1.0 each
    assert greedy_budgeted_communities({1, 2, 3}, communities, 2) == [1]  # budget spent after 2 nodes
    assert greedy_budgeted_communities({99}, communities, 100) == []  # nothing covers it
    # brute force: no choice within the budget covers more anchors than greedy here
    best = max(len(set().union(*(communities[i] for i in combo)) & {1, 2, 3})
               for r in range(1, 4) for combo in itertools.combinations(range(4), r)
               if sum(len(communities[i]) for i in combo) <= 3)
    assert best == 3


@pytest.fixture(scope="module")
def tg(tmp_path_factory: pytest.TempPathFactory) -> ThinkGraph:
    graph = ThinkGraph(tmp_path_factory.mktemp("glb") / "g.db", settings=Settings(), embedder=HashEmbedder())
    graph.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    yield graph
    graph.close()


def test_suggest_global_sums_singleton_seeded_walks(tg: ThinkGraph) -> None:
    pgraph = build_proposition_graph(tg.view)
    config = ToPGConfig(k=10, theta=-1.0)
    suggester = Suggester(pgraph, config)
    part = [pgraph.texts.index("Alice Stone founded Acme Corp"), pgraph.texts.index("Carol Diaz born in Rivertown")]
    queries = {p: tg.view.embed_query(t) for p, t in zip(part, ["Alice founded", "Carol born"], strict=True)}
    explorer = GlobalExplorer(suggester, config, llm=None, select=None, embed=tg.view.embed_query)
    chosen, reached_by = explorer.suggest_global(part, queries, taken=set(part))
    sub = suggester.extract_subgraph(part)
    total = np.zeros(len(sub))
    per_node = {}
    for node in part:
        m = query_aware_transition(pgraph.incidence[sub], pgraph.vectors.vectors[sub] @ queries[node], lam=0.5,
                                   theta=-1.0, tau=0.1)
        seed = (sub == node).astype(float)
        per_node[node] = personalized_pagerank(None, seed, damping=0.85, transition=m)
        total += per_node[node]
    expected = [int(sub[i]) for i in np.argsort(-total, kind="stable") if int(sub[i]) not in part and total[i] > 0]
    assert chosen == expected[:10]
    for node, origin in reached_by.items():
        i = int(np.flatnonzero(sub == node)[0])
        assert per_node[origin][i] == max(per_node[p][i] for p in part)


async def test_global_mode_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with ThinkGraph(path, settings=Settings(), embedder=HashEmbedder()) as built:
        built.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    scores = iter([90, 40, 70, 10, 55, 80, 20, 30])
    calls: list[str] = []

    def reply(kind: str):  # noqa: ANN202
        def handler(request: ChatRequest) -> str:
            calls.append(kind)
            content = request.messages[0]["content"]
            if kind == "decompose":
                return json.dumps({"questions": ["Who founded Acme Corp?", "Where is Rivertown?"]})
            if kind == "select":
                facts = [line for line in content.splitlines() if line.startswith("[")]
                return json.dumps({"reason": "all help", "keep": list(range(1, len(facts) + 1))})
            if kind == "intermediate":
                score = next(scores)
                return json.dumps({"answer": f"points-{score}", "score": score})
            return "Final report."
        return handler

    backend = ScriptedBackend(rules=[("complementary sub-questions", reply("decompose")),
                                     ("Keep only the facts", reply("select")),
                                     ("rate how useful", reply("intermediate")),
                                     ("partial analyses", reply("report"))])
    with ThinkGraph.open(path, settings=Settings(), embedder=HashEmbedder(), backend=backend) as tg:
        answer = await tg.aask("What is known about Acme Corp and its town?", method="topg", mode="global",
                               breadth=2, min_facts=7, k=3, min_community_size=2, budget=100,
                               max_tokens_community_chunks=60)
    assert answer.status == "answered" and answer.text == "Final report."
    assert calls[0] == "decompose" and calls[-1] == "report" and "intermediate" in calls
    actions = [s.action for s in answer.trace]
    assert "suggest.global" in actions and "communities" in actions
    report_prompt = backend.requests[-1].messages[0]["content"]
    order = [int(x.split()[0]) for x in report_prompt.split("points-")[1:]]
    assert len(order) >= 2 and order == lost_in_the_middle(sorted(order, reverse=True))
    assert answer.citations


def test_synonymous_entities_are_one_connector(tmp_path: Path) -> None:
    from thinkgraph.models import Edge

    with ThinkGraph(tmp_path / "s.db", settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
        names = {n.text: n.id for n in tg.store.iter_nodes("entity")}
        before = build_proposition_graph(tg.view)
        tg.store.add_edges([Edge(names["Alice Stone"], names["Carol Diaz"], "SYNONYM")])
        tg.__dict__.pop("view", None)
        after = build_proposition_graph(tg.view)
        assert len(after.connectors) == len(before.connectors) - 1
        founded = after.texts.index("Alice Stone founded Acme Corp")
        born = after.texts.index("Carol Diaz born in Rivertown")
        assert set(after.incidence[founded].indices) & set(after.incidence[born].indices)


@pytest.mark.parametrize("decomposition", ["not json", json.dumps({"questions": ["...", " "]})])
async def test_global_falls_back_and_fails_cleanly(tmp_path: Path, decomposition: str) -> None:
    """An unusable decomposition, or one that only copies the prompt's placeholder, leaves the question
    itself to seed."""
    path = tmp_path / "g.db"
    with ThinkGraph(path, settings=Settings(), embedder=HashEmbedder()) as built:
        built.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    backend = ScriptedBackend(rules=[("complementary sub-questions", decomposition),
                                     ("Keep only the facts", json.dumps({"reason": "it helps", "keep": [1]}))])
    with ThinkGraph.open(path, settings=Settings(), embedder=HashEmbedder(), backend=backend) as tg:
        # decomposition fails -> the question itself seeds; no community of >= 50 nodes -> failed
        answer = await tg.aask("Acme Corp?", method="topg", mode="global", min_facts=1, k=3,
                               min_community_size=50)
    assert answer.status == "failed" and "no community" in answer.message
    decompose = next(s for s in answer.trace if s.action == "decompose")
    assert decompose.outputs["questions"] == []
    assert [s.inputs["question"] for s in answer.trace if s.action == "select"] == ["Acme Corp?"]
    assert [s.outputs["chosen"] for s in answer.trace if s.action == "communities"] == [0]


def test_alg3_counts_every_node_of_a_community_in_its_size_and_the_budget(tg: ThinkGraph) -> None:
    from thinkgraph.methods.topg.global_mode import CommunityReporter

    pgraph = build_proposition_graph(tg.view)

    def reporter(budget: int) -> CommunityReporter:
        config = ToPGConfig(min_community_size=2, budget=budget)
        return CommunityReporter(Suggester(pgraph, config), config, tg.store)

    communities = reporter(8000).communities
    n = pgraph.n
    props = [[m for m in c if m < n] for c in communities]
    # communities hold entities and passages (connector j as n + j) beside propositions, and the size
    # filter counts them all
    assert communities and all(p and len(p) < len(c) for p, c in zip(props, communities, strict=True))
    assert all(2 <= len(c) <= 150 for c in communities)
    anchors = [min(props[0]), min(props[1])]
    smaller = min(len(communities[0]), len(communities[1]))
    assert max(len(props[0]), len(props[1])) < smaller  # counting propositions only would not stop at one
    # B = the smaller community's node count: the first community chosen spends it, counted in nodes
    spent = reporter(smaller)
    chosen = spent.choose(anchors)
    assert len(chosen) == 1 and spent.trace[-1].outputs["nodes"] == len(communities[chosen[0]]) >= smaller
    roomy = reporter(len(communities[0]) + len(communities[1]))
    assert sorted(roomy.choose(anchors)) == [0, 1]  # room for both: every anchor covered
