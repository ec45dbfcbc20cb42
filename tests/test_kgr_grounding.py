"""kgr with a scripted model that reads the graph's observations: the tree search reaches the bridge
of a 2-hop question, the answer cites the passages it rests on, an ungrounded answer says so, the call
budget ends a search as an outcome, and every prompt carries the few-shot examples (App. F)."""

from __future__ import annotations

import itertools
import re

import pytest

from test_kgr_method import AGENT, MERGE, READ, SCORE, SELECT, calls
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.testing import ScriptedBackend

QUESTION = "Where is the company founded by Alice Stone based?"


def task(request: ChatRequest) -> str:
    """The conversation after the prompt's examples (an agent step's earlier steps are turns of it)."""
    return "\n".join(m["content"] for m in request.messages).split("Now your task.")[-1]


def observations(text: str) -> list[str]:
    return re.findall(r"Observation \d+: (.*)", text)


def walker(request: ChatRequest) -> str:
    """Follows the graph: finds Alice Stone, her `founded` neighbour, its `based in` neighbour, then
    finishes. Candidate 2 of each expansion wanders off to the Moon. Every reply runs on past its
    action with an invented observation and a Finish, as small models do."""
    text = task(request)
    seen = observations(text)
    candidate = re.search(r"Candidate (\d) of", text)
    runaway = "\nObservation: The answer is Paris.\nThought: done.\nAction: Finish[Paris]"
    if candidate and candidate.group(1) == "2":
        return "Thought: Maybe the Moon matters.\nAction: RetrieveNode[Moon]" + runaway
    if not seen:
        return "Thought: I need Alice Stone's node.\nAction: RetrieveNode[Alice Stone]" + runaway
    last = seen[-1]
    if "Rivertown" in last:
        return "Thought: The company is based in Rivertown.\nAction: Finish[Rivertown]"
    ids = re.findall(r"(ent:\w+) \(([^)]+)\)", last)
    if "Alice Stone" in last:
        return f"Thought: What did she found?\nAction: NeighborCheck[{ids[0][0]}, founded]" + runaway
    acme = next((i for i, name in ids if name == "Acme Corp"), None)
    if acme:
        return f"Thought: Where is Acme Corp based?\nAction: NeighborCheck[{acme}, based in]" + runaway
    return "Thought: lost.\nAction: RetrieveNode[Alice Stone]"


def selector(request: ChatRequest) -> str:
    """Prefers the chains that got further along the graph (not to the Moon), in prose."""
    choices = re.split(r"\nChoice (\d+):\n", task(request))[1:]
    ranked = sorted(((n, body) for n, body in zip(choices[0::2], choices[1::2], strict=True)),
                    key=lambda c: ("Moon" in c[1], -len(observations(c[1]))))
    order = ", ".join(n for n, _ in ranked)
    return (f"Let me analyse each choice.\nChoice {ranked[-1][0]} drifts to an unrelated node.\n"
            f"Overall the chains that follow the founded edge are better.\nThe best choices are: {order}\n"
            "I hope this helps.")


def reader(request: ChatRequest) -> str:
    """The one reader: follows the chain's relations through the passages shown and cites the two hops."""
    prompt = request.messages[-1]["content"]
    shown = dict((text, n) for n, text in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE))
    hops = [n for text, n in shown.items() if "founded Acme Corp" in text or "based in Rivertown" in text]
    return "Asks for: a place\nFacts: Alice Stone founded Acme Corp, based in Rivertown.\n" \
           f"Answer: Rivertown {''.join(f'[{n}]' for n in hops)}"


@pytest.mark.parametrize("reader_option", ["shared", "paper"])
async def test_tree_search_reaches_the_bridge_and_the_answer_cites_it(open_bridge, reader_option: str) -> None:  # noqa: ANN001
    """reader="paper": the best chain's Finish is the answer, citing the passages behind its nodes; the
    default (issue 47): the one reader answers from those passages, beside the chain's own Finish, and
    cites the ones it read the answer from."""
    backend = ScriptedBackend(rules=[(SELECT, selector), (READ, reader), (AGENT, walker)], honour_stop=False)
    tg = open_bridge(backend)
    answer = await tg.aask(QUESTION, "kgr", strategy="tot", k=2, t=1, steps=5, reader=reader_option)
    assert answer.text == "Rivertown" and answer.status == "answered"
    assert answer.stats["outcome"] == "finished" and answer.stats["grounded"] is True
    assert [n.text for n in answer.evidence.nodes][:3] == ["Alice Stone", "Acme Corp", "Rivertown"]
    # the invented observations and Finish[Paris] of the runaway replies were never taken
    assert "Paris" not in " ".join(s.outputs.get("answer", "") for s in answer.trace)
    # the answer claims support, so it carries its citations: the bridge passage among them
    docs = [c.doc_id for c in answer.citations]
    assert "c2" in docs and docs[0] in {"c1", "c2"} and "c6" not in docs
    if reader_option == "shared":
        assert sorted(docs) == ["c1", "c2"] and calls(backend, READ) == 1
        read = backend.requests[-1].messages[-1]["content"]  # the chain's own Finish beside the passages
        assert "The graph search's own answer:\n- Rivertown\n\nPassages:\n[1] " in read


async def test_an_answer_that_never_touched_the_graph_says_it_has_no_support(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(AGENT, "Sure! Thought: I know this.\nAction: Finish[Rivertown]")])
    answer = await open_bridge(backend).aask(QUESTION, "kgr")
    assert answer.text == "Rivertown" and answer.stats["grounded"] is False
    assert not answer.citations and "no support" in answer.message


async def test_call_budget_ends_the_search_as_an_outcome(kg) -> None:  # noqa: ANN001
    steps = itertools.count(1)
    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 1, 2, 3"),
                                     (MERGE, lambda r: f"Thought: merged {next(steps)}.\nAction: RetrieveNode[x]"),
                                     (AGENT, lambda r: f"Thought: idea {next(steps)}.\nAction: RetrieveNode[y]")])
    answer = await kg(backend).aask("q?", "kgr", strategy="got", max_calls=10)
    assert answer.status == "failed" and answer.stats["outcome"] == "budget_reached"
    assert answer.cost.calls == 10 and "call budget (max_calls=10) without a final answer" in answer.message

    def finish_first(request: ChatRequest) -> str:
        text = task(request)
        if "Candidate 3 of" in text and "Observation" not in text:
            return "Thought: known.\nAction: Finish[Warsaw Institute]"
        return f"Thought: idea {next(steps)}.\nAction: RetrieveNode[graph reasoning]"

    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 3, 1, 2"), (AGENT, finish_first)])
    answer = await kg(backend).aask("another q?", "kgr", strategy="tot", max_calls=8)
    assert answer.text == "Warsaw Institute" and answer.status == "answered"
    assert answer.stats["budget_reached"] is True and answer.stats["outcome"] == "finished"
    assert "the best chain finished before it answers" in answer.message


async def test_every_prompt_carries_examples_unless_few_shot_is_off(kg) -> None:  # noqa: ANN001
    thoughts = itertools.count(1)

    def think(request: ChatRequest) -> str:
        done = "Previous thoughts:\n(none)" not in request.messages[-1]["content"]
        return "Finish[Tomasz Nowak]" if done else f"Thought about the paper {next(thoughts)}."

    rules = [(SCORE, "Score: 0.5 because it is plausible"), (MERGE, "Finish[Tomasz Nowak]"),
             ("List the entities in the text", "Entities: [Graph reasoning with language models]"),
             ("attributes of this entity", "[year]"), ("relations of this entity", "[author]"),
             ("reached from the entity through the relation", "[Tomasz Nowak]"),
             ("Are the thoughts and the knowledge-graph facts", "[Yes]"), ("Think step by step", think)]
    for few_shot in (True, False):
        backend = ScriptedBackend(rules=list(rules))
        answer = await kg(backend).aask(f"q {few_shot}?", "kgr", strategy="got", interaction="explore",
                                              k=2, t=1, evaluator="score", few_shot=few_shot)
        assert answer.text == "Tomasz Nowak"
        prompts = [r.messages[-1]["content"] for r in backend.requests]
        assert all(any(needle in p for p in prompts) for needle, _ in rules)  # every kind of prompt was sent
        assert all(("Here are some examples:" in p) is few_shot for p in prompts)
    backend = ScriptedBackend(rules=[(AGENT, "Thought: x.\nAction: Finish[y]")])
    await kg(backend).aask("q?", "kgr")
    assert "Action 2: NeighborCheck[P31, author]" in backend.requests[0].messages[-1]["content"]
