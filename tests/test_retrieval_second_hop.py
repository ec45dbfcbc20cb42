"""The second hop of `ppr` without an LLM (retrieval/second_hop.py): the residual question, the
passage chained to the best one, and both through the method on a small multi-hop corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import CHAIN_DOCS, CHAIN_QUESTION, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.models import NodeType
from thinkgraph.retrieval.linking import Link, strip_mentions
from thinkgraph.retrieval.second_hop import chain_second, residual_question

DOCS, QUESTION = CHAIN_DOCS, CHAIN_QUESTION


@pytest.mark.parametrize(("question", "mentions", "expected"), [
    ("Who did Barry Wesson's team play?", ["barry wesson"], "Who did team play?"),
    ("Which county is Johnnycake, West Virginia in?", ["johnnycake west virginia"], "Which county is in?"),
    ("Is BARRY WESSON tall?", ["barry wesson"], "Is tall?"),
    ("Where is Eyeland near the Eye?", ["eye"], "Where is Eyeland near the ?"),  # whole words only
    ("Did Big Eye win?", ["eye", "big eye"], "Did win?"),  # the longer mention first
    ("Who is here?", [], "Who is here?"),
    ("Who is here?", ["'s", ""], "Who is here?"),  # a mention without words removes nothing
])
def test_strip_mentions(question: str, mentions: list[str], expected: str) -> None:
    assert strip_mentions(question, mentions) == expected


def test_residual_question_drops_only_the_entities_the_first_hop_found() -> None:
    links = [Link("e1", "zorvath quell", 1.0), Link("e2", "Harrowgate", 0.92)]
    assert residual_question(QUESTION, links, {"e1", "e9"}) == "Where did the fleet of sail from?"
    assert residual_question(QUESTION, links, set()) == QUESTION


@pytest.fixture
def chain_index(tmp_path: Path, settings: Settings) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    path = tmp_path / "g.db"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([docs])
    return path


def _rows(tg: ThinkGraph) -> dict[str, int]:
    """Doc id -> position of its passage among the chunk vectors."""
    chunks = tg.view.vectors(NodeType.CHUNK)
    return {n.props["doc_id"]: chunks.position[n.id] for n in tg.store.get_nodes(chunks.ids)}


def test_chain_lifts_the_best_neighbour_of_the_first_passage_to_second(chain_index: Path, settings: Settings) -> None:
    with ThinkGraph.open(chain_index, settings=settings, embedder=HashEmbedder()) as tg:
        row = _rows(tg)
        scores = np.zeros(len(row))
        scores[[row["a.txt"], row["e.txt"], row["c.txt"], row["b.txt"], row["d.txt"]]] = [1.0, 0.8, 0.6, 0.5, 0.4]
        residual = np.zeros(len(row))
        residual[row["b.txt"]] = 1.0  # the residual question matches the second hop
        lifted = chain_second(tg.view, scores, residual)
        order = [next(d for d, r in row.items() if r == i) for i in np.argsort(-lifted, kind="stable")]
        # e shares no entity with a, so it cannot be chained however well it scores; b beats the
        # other neighbours c and d on the residual question, and lands between a and the old second
        assert order == ["a.txt", "b.txt", "e.txt", "c.txt", "d.txt", "f.txt"]
        assert scores[row["e.txt"]] < lifted[row["b.txt"]] < scores[row["a.txt"]]
        assert scores[row["b.txt"]] == 0.5  # the input is left alone
        # the walk's score counts as much as the residual: c, far ahead in the walk, wins over b
        scores[row["c.txt"]] = 0.79
        residual[row["c.txt"]] = 0.6
        assert np.argsort(-chain_second(tg.view, scores, residual))[1] == row["c.txt"]


def test_chain_leaves_scores_alone_when_there_is_nothing_to_lift(chain_index: Path, settings: Settings) -> None:
    with ThinkGraph.open(chain_index, settings=settings, embedder=HashEmbedder()) as tg:
        row = _rows(tg)
        residual = np.zeros(len(row))
        residual[row["b.txt"]] = 1.0
        already = np.zeros(len(row))
        already[[row["a.txt"], row["b.txt"], row["e.txt"]]] = [1.0, 0.9, 0.8]
        assert chain_second(tg.view, already, residual) is already
        lonely = np.zeros(len(row))  # f names no entity: no passage shares one with it
        lonely[[row["f.txt"], row["e.txt"]]] = [1.0, 0.9]
        assert chain_second(tg.view, lonely, residual) is lonely
        bridge_first = np.zeros(len(row))  # d's only entity, Ember Fleet, reaches a and b
        bridge_first[[row["d.txt"], row["e.txt"]]] = [1.0, 0.9]
        assert np.argsort(-chain_second(tg.view, bridge_first, residual))[1] == row["b.txt"]
        tie = np.zeros(len(row))
        tie[[row["a.txt"], row["e.txt"]]] = 1.0
        assert chain_second(tg.view, tie, residual) is tie
        assert chain_second(tg.view, np.array([1.0, 0.5]), np.zeros(2)).tolist() == [1.0, 0.5]


def test_ppr_ranks_the_second_hop_second_with_the_residual_question(chain_index: Path, settings: Settings) -> None:
    with ThinkGraph.open(chain_index, settings=settings, embedder=HashEmbedder()) as tg:
        def ranked(**options: object) -> list[str]:
            return [c.doc_id for c in tg.ask(QUESTION, method="ppr", top_k=5, **options).citations]

        assert ranked()[:2] == ["a.txt", "b.txt"]
        # the trace says what the second hop asked and which passage the chain put second
        step = tg.ask(QUESTION, method="ppr", top_k=5).trace[0]
        assert step.outputs["second_hop_question"] == "Where did the fleet of sail from?"
        b_chunk = next(n.id for n in tg.store.iter_nodes(NodeType.CHUNK) if n.props["doc_id"] == "b.txt")
        assert step.outputs["chained_passage"] == b_chunk and step.outputs["passages"][1] == b_chunk
        plain = tg.ask(QUESTION, method="ppr", top_k=5, second_hop_query="question", hop_chain=False).trace[0]
        assert "second_hop_question" not in plain.outputs and "chained_passage" not in plain.outputs
        # without the chain the first hop's look-alike (same entity, "sailed") comes second
        assert ranked(hop_chain=False)[:3] == ["a.txt", "c.txt", "b.txt"]
        # a chain scored on the whole question picks the look-alike too: the residual is what finds b
        assert ranked(second_hop_query="question")[:2] == ["a.txt", "c.txt"]
