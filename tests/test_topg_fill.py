"""What fills topg's reader past its facts' passages (``reader_fill``, methods/topg/fill.py and reading.py):
where the shared walk restarts (the entities of the reader's first facts, weighed by their rank, or the
entities their passages mention), and what the reader is shown under each fill."""

from __future__ import annotations

import dataclasses
import re

import pytest
import scipy.sparse as sp

from test_topg_method import Script, keep_matching, read_citing, stop
from thinkgraph.eval.runner import retrieved_documents
from thinkgraph.methods.topg.fill import fact_seeds
from thinkgraph.methods.topg.graph import proposition_graph

QUESTION = "Where is the company founded by Alice Stone based?"


def reader_prompt(script: Script) -> str:
    return script.backend.requests[-1].messages[-1]["content"]


@pytest.fixture
def open_tg(open_bridge):  # noqa: ANN001, ANN201
    return lambda script: open_bridge(script.backend)


@pytest.mark.parametrize("fill, shown, text", [("walk", ["Alice Stone founded", "Acme Corp is based in Rivertown"],
                                                "Rivertown"),
                                               ("none", ["Alice Stone founded"], "Unknown")])
async def test_topg_reads_the_passage_past_the_fact_that_names_the_bridge(open_tg, fill: str, shown: list[str],  # noqa: ANN001
                                                                          text: str) -> None:
    """Select keeps the fact that names the bridge (Alice Stone founded Acme Corp) and nothing of where
    Acme Corp is; Eval stops there. With two passages to read and one of them the walk's, the reader
    reads c1 and then the passage the shared walk from Alice Stone and Acme Corp ranks first for the
    question (c2, Acme Corp's), and answers the last hop; ``reader_fill="none"`` reads c1 alone."""
    script = Script(select=keep_matching("Alice"), eval=lambda r: stop(True),
                    read=read_citing("based in Rivertown", "Rivertown"))
    tg = open_tg(script)
    answer = await tg.aask(QUESTION, "topg", k=5, reader_passages=2, reader_fill_passages=1, reader_fill=fill)
    passages = re.findall(r"^\[\d+\] (.*)$", reader_prompt(script).split("Passages:", 1)[1], re.MULTILINE)
    assert len(passages) == len(shown) and all(s in p for s, p in zip(shown, passages, strict=True))
    assert answer.text == text and f"reader_fill={fill}" in answer.stats["variant"]
    step = next(s for s in answer.trace if s.action == "topg.answer")
    walked = [tg.store.get_node(c).props["doc_id"] for c in step.inputs.get("walked", [])]
    assert walked == (["c2"] if fill == "walk" else [])
    # the answer's evidence is what the reader read first (the walk's passage too), then the rest collected
    assert retrieved_documents(answer)[: len(shown)] == ["c1", "c2"][: len(shown)]


@pytest.mark.parametrize("fill_passages, shown", [(0, ["Alice Stone founded", "Bob Reed works"]),
                                                  (1, ["Alice Stone founded", "Acme Corp is based in Rivertown"])])
async def test_the_walk_takes_its_share_of_the_reader_passages(open_tg, fill_passages: int,  # noqa: ANN001
                                                              shown: list[str]) -> None:
    """The facts' passages (c1, c4) fill both of the reader's; ``reader_fill_passages`` of them go to the
    walk's passages instead (0: the walk only fills room the facts leave)."""
    script = Script(select=keep_matching("Alice", "Bob"), eval=lambda r: stop(True),
                    read=read_citing("based in Rivertown", "Rivertown"))
    await open_tg(script).aask(QUESTION, "topg", k=5, reader_passages=2, reader_fill_passages=fill_passages)
    passages = re.findall(r"^\[\d+\] (.*)$", reader_prompt(script).split("Passages:", 1)[1], re.MULTILINE)
    assert len(passages) == 2 and all(s in p for s, p in zip(shown, passages, strict=True))


def test_the_walk_restarts_at_the_first_facts_entities_weighed_by_rank(open_bridge) -> None:  # noqa: ANN001
    """Each entity weighs 1 / r**2 for the first fact (rank r) that names it; a fact that names no entity
    the index knows lends its passages' entities."""
    tg = open_bridge(None)
    view = tg.view
    graph = proposition_graph(view)
    row = {text: i for i, text in enumerate(graph.texts)}
    names = {n.id: n.text for n in view.store.iter_nodes("entity")}
    facts = [row["Bob Reed works at Acme Corp"], row["Alice Stone founded Acme Corp"]]
    seeds = {names[e]: w for e, w in fact_seeds(view, graph, facts).items()}
    assert seeds == {"Bob Reed": 1.0, "Acme Corp": 1.0, "Alice Stone": 0.25}
    # the same graph with the Bob Reed fact's entity links cut: its passage (c4) lends Bob Reed and Acme Corp
    incidence = graph.incidence.tolil()
    for j, connector in enumerate(graph.connectors):
        if connector in names:
            incidence[facts[0], j] = 0
    cut = dataclasses.replace(graph, incidence=sp.csr_matrix(incidence))
    seeds = {names[e]: w for e, w in fact_seeds(view, cut, facts).items()}
    assert seeds == {"Bob Reed": 1.0, "Acme Corp": 1.0, "Alice Stone": 0.25}
    assert fact_seeds(view, graph, []) == {}
