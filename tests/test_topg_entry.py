"""ToPG enters the graph by the paper's SuggestNaive (§2.3.1, Alg. 1 l. 2), and returns and cites the
passages of the facts its own steps collected and Select kept, in its own order: an independent cosine
top-k, Select's choices reaching the output, an LLM-free pool of its own (not ppr's), the walk's
passages past the entry's k, and the ablation switches (no Select; retrieval as the entry's alias)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import ConfigError
from thinkgraph.eval.runner import retrieved_documents
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.topg import ToPGConfig
from thinkgraph.models import Answer, NodeType
from thinkgraph.testing import ScriptedBackend

CAROL_QUESTION = "Is the Greenland Valley town where Acme Corp is based home to Carol Diaz?"


def facts_in(request: ChatRequest) -> list[str]:
    text = request.messages[0]["content"].split("Facts", 1)[1]
    return [line.split("] ", 1)[1] for line in text.splitlines() if line.startswith("[")]


def keep_containing(word: str):  # noqa: ANN201
    """A Select that keeps the facts containing ``word``."""
    def reply(request: ChatRequest) -> str:
        keep = [n for n, fact in enumerate(facts_in(request), 1) if word in fact]
        return json.dumps({"reason": "it names the word", "keep": keep})
    return reply


def scripted(select) -> ScriptedBackend:  # noqa: ANN001
    """Select as given; Eval's stop judgement says "no", and the one reader, which answers after max_iter
    from the passages of the facts collected (issue 47), abstains: no marker, so it cites every passage
    it read."""
    return ScriptedBackend(rules=[("Keep only the facts", select),
                                  ("Can the question be answered", '{"reason": "not yet", "verdict": "no"}'),
                                  ("targeted sub-questions", '{"questions": []}'),
                                  ("Answer the question using only the numbered passages below", "Answer: Unknown")])


def propositions(answer: Answer) -> list[str]:
    return [n.text for n in answer.evidence.nodes if n.type == "proposition"]


def cosine_top(tg: ThinkGraph, question: str, k: int) -> list[tuple[str, float]]:
    """SuggestNaive computed apart: every triplet's text embedded afresh, cosine to the question, top k."""
    texts = [n.text for n in tg.store.iter_nodes(NodeType.TRIPLET)]
    embedder = HashEmbedder()
    vectors, query = embedder.embed(texts), embedder.embed([question])[0]
    cosine = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
    return [(texts[i], round(float(cosine[i]), 5)) for i in np.argsort(-cosine, kind="stable")[:k]]


def doc_of(tg: ThinkGraph, fact: str) -> str:
    (chunk,) = [e.dst for n in tg.store.iter_nodes(NodeType.TRIPLET) if n.text == fact
                for e in tg.store.edges_of(n.id, "MENTIONED_IN") if e.src == n.id]
    return str(tg.store.get_node(chunk).props["doc_id"])


async def test_the_default_entry_is_an_independent_cosine_top_k(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    question = "Where is Acme Corp based?"
    answer = await tg.aask(question, method="topg", mode="naive", k=4)
    expected = cosine_top(tg, question, 4)
    scores = dict(cosine_top(tg, question, 7))
    assert answer.stats["entry"] == "suggest_naive"
    # the same facts, best first (facts of equal cosine in either order)
    assert [scores[f] for f in propositions(answer)] == [s for _, s in expected]
    assert set(propositions(answer)) == {f for f, _ in expected}
    # local mode starts from the same (its facts in the order collected)
    walked = await tg.aask(question, method="topg", k=4, max_iter=1, reader_order="collected")
    assert propositions(walked)[:4] == propositions(answer)


async def test_two_select_choices_give_different_returned_and_cited_passages(open_bridge) -> None:  # noqa: ANN001
    question = "Where is Acme Corp based?"
    runs: dict[str, Answer] = {}
    for seed, word in enumerate(("based in", "founded")):
        tg = open_bridge(scripted(keep_containing(word)))
        tg.llm.settings.seed = seed  # each model is asked: the LLM cache does not answer for the other
        runs[word] = await tg.aask(question, method="topg", k=2, max_iter=1, reader_fill="none")
    based, founded = runs["based in"], runs["founded"]
    assert propositions(based) == ["Acme Corp based in Rivertown"]
    assert propositions(founded)[0] == "Alice Stone founded Acme Corp" and "founded" in propositions(founded)[-1]
    # what the method returns and cites is what Select kept: not the entry's passages before them (the
    # walk's passages past them, reader_fill="walk", are tests/test_topg_fill.py's)
    assert retrieved_documents(based) == [c.doc_id for c in based.citations] == ["c2"]
    assert retrieved_documents(founded) == [c.doc_id for c in founded.citations] == ["c1"]


async def test_select_prunes_without_reordering(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(scripted(lambda r: json.dumps({"reason": "these two", "keep": [3, 1]})))
    answer = await tg.aask("Where is Acme Corp based?", method="topg", k=3, max_iter=1)
    naive = await open_bridge(None).aask("Where is Acme Corp based?", method="topg", k=3, mode="naive")
    first = next(s for s in answer.trace if s.action == "select")
    assert first.outputs["kept"] == [propositions(naive)[0], propositions(naive)[2]]  # SuggestNaive's order


async def test_the_llm_free_pool_is_topgs_own_not_pprs(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    ppr = retrieved_documents(await tg.aask(CAROL_QUESTION, method="ppr"))
    topg = await tg.aask(CAROL_QUESTION, method="topg", k=1, max_iter=1)
    (best, _), = cosine_top(tg, CAROL_QUESTION, 1)
    assert ppr[0] == "c5"  # the linked entity Carol Diaz leads the shared walk to her passage
    assert propositions(topg)[0] == best and retrieved_documents(topg)[0] == doc_of(tg, best) != "c5"
    assert retrieved_documents(topg) != ppr[: len(retrieved_documents(topg))]


async def test_the_walks_passages_are_returned_past_the_entrys_k(tmp_path: Path) -> None:
    """25 workers of Acme Corp, each in a passage of their own: SuggestNaive's k = 20 enter from 20
    passages, and the walk on M brings the other 5 through Acme Corp; their passages are returned and
    cited too (the former cut at 20 passages dropped them)."""
    corpus, openie = tmp_path / "corpus.jsonl", tmp_path / "openie.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"w{i}", "title": f"Worker{i}", "text": f"Worker{i} joined Acme Corp."})
                              + "\n" for i in range(25)))
    openie.write_text("".join(json.dumps({"doc_id": f"w{i}", "entities": [f"Worker{i}", "Acme Corp"],
                                          "triples": [[f"Worker{i}", "joined", "Acme Corp"]]}) + "\n"
                              for i in range(25)))
    with ThinkGraph(tmp_path / "w.db", settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([corpus], openie=openie)
        answer = await tg.aask("Who joined Acme Corp?", method="topg", k=20, max_iter=1)
    walked = [s.outputs["suggested"] for s in answer.trace if s.action == "suggest.local"]
    assert walked == [5] and len(propositions(answer)) == 25
    assert sorted(retrieved_documents(answer)) == sorted(f"w{i}" for i in range(25)) and len(answer.citations) == 25


async def test_without_select_every_suggestion_is_kept_with_an_llm(open_bridge) -> None:  # noqa: ANN001
    def no_select(request: ChatRequest) -> str:
        raise AssertionError("Select is switched off")

    question = "Where is Acme Corp based?"
    answer = await open_bridge(scripted(no_select)).aask(question, method="topg", k=2, max_iter=1, select=False,
                                                         reader_fill="none")  # the LLM-free pool has no reader
    pool = await open_bridge(None).aask(question, method="topg", k=2, max_iter=1)
    assert propositions(answer) == propositions(pool) and retrieved_documents(answer) == retrieved_documents(pool)
    assert "eval" in [s.action for s in answer.trace] and "select" not in [s.action for s in answer.trace]
    assert "no Select: every suggestion kept" in answer.stats["variant"]


async def test_retrieval_names_an_entry(open_bridge) -> None:  # noqa: ANN001
    assert ToPGConfig(retrieval="paper").entry == "suggest_naive" == ToPGConfig().entry
    assert ToPGConfig(retrieval="shared").entry == "ppr_passages"
    with pytest.raises(ValidationError, match="names entry=suggest_naive"):
        ToPGConfig(retrieval="paper", entry="ppr_passages")
    with pytest.raises(ConfigError, match="retrieval must be one of"):
        await open_bridge(None).aask("q", method="topg", retrieval="both")


async def test_the_hybrid_entry_lets_a_named_entity_in_ahead_of_a_close_embedding(open_bridge) -> None:  # noqa: ANN001
    """entry=suggest_hybrid (ours): the bridge fact naming the question's place (Greenland Valley, a
    linked entity and a BM25 match) enters second, where SuggestNaive's cosine ties it with three other
    facts behind two of them."""
    tg = open_bridge(None)
    bridge = "Rivertown lies in Greenland Valley"
    naive = await tg.aask(CAROL_QUESTION, method="topg", mode="naive", k=5)
    hybrid = await tg.aask(CAROL_QUESTION, method="topg", mode="naive", k=5, entry="suggest_hybrid")
    assert propositions(naive).index(bridge) >= 2
    assert propositions(hybrid)[:2] == ["Acme Corp based in Rivertown", bridge]
    assert set(propositions(hybrid)) == set(propositions(naive))  # the same five, in another order
    step = next(s for s in hybrid.trace if s.action == "suggest.hybrid")
    assert {"greenland valley", "carol diaz"} <= set(step.outputs["linked"]) and step.outputs["lexical"]
    assert "suggest_hybrid" in hybrid.stats["variant"]


async def test_the_hybrid_entry_is_suggestnaive_when_nothing_else_matches(open_bridge) -> None:  # noqa: ANN001
    """No question word in any proposition and no entity named: the fusion has only the cosine ranking."""
    tg = open_bridge(None)
    question = "qwzx vprt?"
    naive = await tg.aask(question, method="topg", mode="naive", k=4)
    hybrid = await tg.aask(question, method="topg", mode="naive", k=4, entry="suggest_hybrid")
    assert propositions(hybrid) == propositions(naive) == [f for f, _ in cosine_top(tg, question, 4)]
