"""The edges among an answer's evidence nodes (methods/run.py ``_connect_evidence``): read pair by pair
through the less connected node, they are exactly the store's edges among those nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import SAMPLE_CORPUS, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.methods.run import EVIDENCE_EDGE_NODES

QUESTIONS = ["Who made the lens of the Skarn Lighthouse, and who trained her?",
             "Who founded the Harbor Hill Observatory?"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("edges") / "e.db"
    settings = Settings()
    settings.index.nolm_propositions = True
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([SAMPLE_CORPUS])
    return path


@pytest.mark.parametrize("method", ["ppr", "a2rag", "topg"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_evidence_edges_are_the_stores_edges_among_the_evidence(index: Path, method: str, question: str) -> None:
    with ThinkGraph.open(index, settings=Settings(), embedder=HashEmbedder()) as tg:
        answer = tg.retrieve(question, method)
        cited = {c.chunk_id for c in answer.citations}
        nodes = list(dict.fromkeys([*(n.id for n in answer.evidence.nodes[:EVIDENCE_EDGE_NODES]),
                                    *(n.id for n in answer.evidence.nodes if n.id in cited)]))
        got = {(e.src, e.dst, e.type) for e in answer.evidence.edges}
        expected = {(e.src, e.dst, e.type) for e in tg.store.edges_among(nodes)}
        assert got == expected and got


def test_many_propositions_before_the_passages_still_reach_them(index: Path) -> None:
    """topg lists its propositions first; with more of them than the nodes looked up, each cited
    passage is still connected to the propositions drawn from it."""
    with ThinkGraph.open(index, settings=Settings(), embedder=HashEmbedder()) as tg:
        answer = tg.retrieve(QUESTIONS[0], "topg", top_k=3)
        from thinkgraph.methods import run

        answer.evidence.edges.clear()
        propositions = [n for n in answer.evidence.nodes if n.type == "proposition"]
        run._connect_evidence(answer, tg.store, tg.view, limit=min(len(propositions), 4))
        cited = {c.chunk_id for c in answer.citations}
        assert any(e.type == "FROM" and (e.src in cited or e.dst in cited) for e in answer.evidence.edges)
