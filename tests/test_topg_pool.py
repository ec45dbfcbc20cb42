"""ToPG's pool: the paper's SuggestNaive entry (the default), the shared walk's entry behind
`entry="ppr_passages"` (a question's linked entity brings its propositions in), passages ranked by the
method's own propositions (no blend with another ranking), `stats.variant`, and Suggest-local never
spending a slot or a Select call on a proposition already collected. Methods run through the envelope
(`run_method`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.run import run_method
from thinkgraph.methods.topg import ToPGConfig, ToPGMethod
from thinkgraph.models import Answer, TraceStep
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.testing import ScriptedBackend

# Carol Diaz is named once, among words that match other facts better: SuggestNaive's best fact for it
# is about Acme Corp, while the link to Carol Diaz leads the shared walk to her passage.
QUESTION = "Is the Greenland Valley town where Acme Corp is based home to Carol Diaz?"
CAROL = "Carol Diaz born in Rivertown"


def method(tg, **options) -> ToPGMethod:  # noqa: ANN001, ANN003
    return ToPGMethod(MethodContext(tg.store, tg.view, tg.settings, tg.llm), ToPGConfig(**options))


def step(answer: Answer, action: str) -> TraceStep:
    return next(s for s in answer.trace if s.action == action)


async def test_a_linked_question_entity_brings_its_proposition_into_the_ppr_passages_entry(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    shared = await run_method(method(tg, k=1, max_iter=1, entry="ppr_passages"), QUESTION)
    entry = step(shared, "suggest.entry").outputs
    assert "carol diaz" in entry["linked"] and "Carol Diaz" in entry["seeds"] and entry["ranked_by"] == "the PPR walk"
    assert shared.evidence.nodes[0].text == CAROL  # the entry, before any walk on M
    assert shared.citations[0].doc_id == "c5"
    tg.settings.retrieval.link_entities = False  # the same walk without the question's entity links
    unlinked = await run_method(method(tg, k=1, max_iter=1, entry="ppr_passages"), QUESTION)
    assert step(unlinked, "suggest.entry").outputs["linked"] == [] and unlinked.evidence.nodes[0].text != CAROL
    paper = await run_method(method(tg, k=1, max_iter=1), QUESTION)  # the default: SuggestNaive
    assert paper.evidence.nodes[0].text != CAROL


@pytest.mark.parametrize("options", [{}, {"retrieval": "paper"}])  # the project-wide switch names it too
async def test_the_default_entry_is_suggest_naive(open_bridge, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                                  options: dict[str, str]) -> None:
    def no_walk(*args: object, **kwargs: object) -> None:
        raise AssertionError("the paper's entry does not walk the passage graph")

    monkeypatch.setattr(GraphRetriever, "passage_ranking", no_walk)
    tg = open_bridge(None)
    m = method(tg, k=3, max_iter=1, **options)
    answer = await run_method(m, QUESTION)
    q = tg.view.embed_query(QUESTION)
    by_cosine = np.argsort(-(m.suggester.graph.vectors.vectors @ q), kind="stable")[:3]
    assert [n.id for n in answer.evidence.nodes[:3]] == [m.suggester.graph.ids[p] for p in by_cosine]
    actions = [s.action for s in answer.trace]
    assert "suggest.naive" in actions and "suggest.entry" not in actions
    assert step(answer, "suggest.naive").inputs["entry"] == "suggest_naive" and answer.stats["entry"] == "suggest_naive"


@pytest.mark.parametrize("entry", ["ppr_passages", "suggest_naive"])
async def test_passages_come_from_the_pools_own_propositions(open_bridge, entry: str) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    m = method(tg, k=2, max_iter=2, entry=entry)
    answer = await run_method(m, QUESTION)
    props = [m.suggester.graph.index[n.id] for n in answer.evidence.nodes if n.type == "proposition"]
    docs = [tg.store.get_node(c).props["doc_id"] for c in m.suggester.passages_of(props)]
    assert [c.doc_id for c in answer.citations] == docs  # in the order the propositions were collected
    assert "c6" not in docs  # nothing the walk did not reach is added


async def test_the_variant_says_what_ran(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    shared = await run_method(method(tg, k=2, max_iter=2, entry="ppr_passages", reader_order="collected"), QUESTION)
    paper = await run_method(method(tg, k=2, max_iter=2, reader_order="collected"), QUESTION)
    ranked = await run_method(method(tg, k=2, max_iter=2), QUESTION)
    naive = await run_method(method(tg, k=2, mode="naive"), QUESTION)
    structural = await run_method(method(tg, k=2, max_iter=2, lam=1.0), QUESTION)
    assert shared.stats["entry"] == "ppr_passages" and paper.stats["entry"] == "suggest_naive"
    for answer in (shared, paper):
        said = answer.stats["variant"]
        assert "every suggestion kept" in said and "max_iter=2 Suggest-local" in said
        assert "in the order collected" in said and "blend" not in said
    assert "shared passage walk" in shared.stats["variant"] and "SuggestNaive" not in shared.stats["variant"]
    assert "SuggestNaive" in paper.stats["variant"] and "shared passage walk" not in paper.stats["variant"]
    assert naive.stats["variant"].startswith("no LLM: the entry's propositions; entry: SuggestNaive")
    assert [s.action for s in shared.trace] == ["suggest.entry", "suggest.local", "suggest.local"]
    assert "ranked by a walk on M" in ranked.stats["variant"] and "order collected" not in ranked.stats["variant"]
    assert [s.action for s in ranked.trace] == ["suggest.naive", "suggest.local", "suggest.local", "rank_collected"]
    facts = [{n.id for n in a.evidence.nodes if n.type == "proposition"} for a in (ranked, paper)]
    assert facts[0] == facts[1]  # the same facts, in another order
    assert "lam=1: M = T_s" in structural.stats["variant"] and "lam=1" not in paper.stats["variant"]


def facts_in(request: ChatRequest) -> list[str]:
    text = request.messages[0]["content"].split("Facts", 1)[1]
    return [line.split("] ", 1)[1] for line in text.splitlines() if line.startswith("[")]


@pytest.mark.parametrize("entry", ["ppr_passages", "suggest_naive"])
async def test_suggest_local_spends_no_slot_or_select_on_collected_propositions(open_bridge,  # noqa: ANN001
                                                                               entry: str) -> None:
    shown: list[list[str]] = []

    def select(request: ChatRequest) -> str:  # keeps every fact it is shown
        shown.append(facts_in(request))
        return json.dumps({"reason": "all help", "keep": list(range(1, len(shown[-1]) + 1))})

    # two sub-questions per iteration: the second must not be offered what the first just collected
    # (Eval's stop judgement says "no"; after max_iter the one reader answers, issue 47: it abstains)
    backend = ScriptedBackend(rules=[("Keep only the facts", select),
                                     ("Can the question be answered", '{"reason": "not yet", "verdict": "no"}'),
                                     ("targeted sub-questions",
                                      json.dumps({"questions": ["Where is Acme Corp based?", "Who works at Acme?"]})),
                                     ("Answer the question using only the numbered passages below", "Answer: Unknown")])
    tg = open_bridge(backend)
    answer = await run_method(method(tg, k=2, max_iter=3, entry=entry), "Who founded Acme Corp?")
    suggested = [s.outputs["suggested"] for s in answer.trace if s.action == "suggest.local"]
    selects = [s for s in answer.trace if s.action == "select"]
    kept = [fact for s in selects for fact in s.outputs["kept"]]
    # the six facts connected to Acme Corp, each offered once: 2 entered, then 2 + 2 found by the walk
    assert len(kept) == len(set(kept)) == 6 and [len(facts) for facts in shown] == [2, 2, 2]
    assert suggested == [2, 2, 0, 0, 0]  # nothing new is left to suggest once the six are collected
    assert len(selects) == len(shown) == 3  # and a Suggest with nothing new costs no Select call
    assert [s.inputs["suggested_by"] for s in selects] == [
        "suggest.entry" if entry == "ppr_passages" else "suggest.naive", "suggest.local", "suggest.local"]
    assert {n.text for n in answer.evidence.nodes if n.type == "proposition"} == set(kept)
