"""kgr's short node names on a corpus-built index (methods/kgr/names.py, ``node_names="short"``; the
default shows the index's ids): the agent reads and writes "E1", "P2" instead of hashed ids, any of them
(or the id itself) resolves, a Finish naming one answers with the node's name, the trace keeps each
short name with its id, and an imported KG keeps its own ids."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.kgr.actions import GraphEnvironment, parse_step
from thinkgraph.methods.kgr.names import NodeNames
from thinkgraph.testing import ScriptedBackend
from thinkgraph.typedkg import TypedGraph, TypedGraphBuilder
from thinkgraph.typedkg.importers import load_grbench

QUESTION = "Where is the company founded by Alice Stone based?"


def walk(request: ChatRequest) -> str:
    """Finds Alice Stone, reads her passages, then finishes naming the first passage by its short name."""
    task = "\n".join(m["content"] for m in request.messages).split("Now your task.")[-1]  # not the example's
    seen = re.findall(r"Observation \d+: (.*)", task)
    if not seen:
        return "Thought: I need Alice Stone.\nAction: RetrieveNode[Alice Stone]"
    if len(seen) == 1:
        entity = re.search(r"node is (\w+) \(entity: Alice Stone\)", seen[0]).group(1)
        return f"Thought: Her passages.\nAction: NeighborCheck[{entity.lower()}, mentioned_in]"  # any case
    passage = re.search(r"\[(P\d+) \(", seen[1]).group(1)
    return f"Thought: That passage answers.\nAction: Finish[{passage}]"


async def test_the_agent_reads_and_writes_short_names_and_the_trace_keeps_their_ids(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[("Answer the question by alternating", walk)])
    answer = await open_bridge(backend).aask(QUESTION, "kgr", reader="paper", repair=False, node_names="short")
    prompts = ["\n".join(m["content"] for m in r.messages).split("Now your task.")[-1] for r in backend.requests]
    assert not any(re.search(r"\b(?:ent|chunk):[0-9a-f]{6,}", p) for p in prompts)  # no hashed id shown
    steps = [s for s in answer.trace if s.action == "step"]
    assert steps[0].outputs["observation"].startswith("The most related node is E1 (entity: Alice Stone)")
    assert steps[1].outputs["observation"].startswith("The mentioned_in neighbours of e1 are: [P1 (")
    # each step's short names with the ids they stand for, so that the trace stays traceable
    assert steps[0].outputs["names"] == {"E1": steps[0].outputs["nodes"][0]}
    assert steps[0].outputs["nodes"][0].startswith("ent:")
    assert all(ext.startswith(("ent:", "chunk:")) for ext in steps[1].outputs["names"].values())
    # Finish[P1] names a node the chain saw: the answer is that node's name, not "P1"
    assert answer.text is not None and answer.text != "P1" and answer.status == "answered"


async def test_by_default_the_agent_sees_the_index_ids(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["Thought: find her.\nAction: RetrieveNode[Alice Stone]",
                                      "Thought: done.\nAction: Finish[Rivertown]"])
    answer = await open_bridge(backend).aask(QUESTION, "kgr", reader="paper", repair=False)
    first = next(s for s in answer.trace if s.action == "step")
    assert re.match(r"The most related node is ent:[0-9a-f]+ \(entity: Alice Stone\)", first.outputs["observation"])
    assert "names" not in first.outputs


@pytest.fixture
def kg_env(tmp_path: Path) -> GraphEnvironment:
    builder = TypedGraphBuilder()
    load_grbench(FIXTURES / "grbench_small.json", builder)
    embedder = HashEmbedder()
    return GraphEnvironment(TypedGraph(builder.write(tmp_path / "g.kg", embedder), embedder), short_names=True)


def test_names_follow_the_order_shown_by_kind_and_every_form_resolves(kg_env: GraphEnvironment) -> None:
    graph = kg_env.graph
    names = NodeNames(graph, short=True)
    a2, p1, p2 = (graph.resolve(x) for x in ("a2", "p1", "p2"))
    assert [names.name(a2), names.name(p1), names.name(a2), names.name(p2)] == ["E1", "E2", "E1", "E3"]
    assert names.resolve("E2") == p1 and names.resolve(" e3 ") == p2 and names.resolve("'E1'") == a2
    assert names.resolve("p2") == p2  # the graph's own id still resolves
    assert names.ext_id("E1") == "a2" and names.ext_id("Warsaw") == "Warsaw"
    assert names.of_ext(["p1", "v9", "a2"]) == {"E2": "p1", "E1": "a2"}
    with pytest.raises(Exception, match="no node 'E9'"):
        names.resolve("E9")
    assert NodeNames(graph, short=False).name(a2) == "a2"


def test_an_action_on_a_short_name_runs_on_its_node(kg_env: GraphEnvironment) -> None:
    found = kg_env.run(parse_step("Action: RetrieveNode[Tomasz Nowak]")[1])
    assert found.text == "The most related node is E1 (author: Tomasz Nowak)." and found.nodes == ["a2"]
    feature = kg_env.run(parse_step("Action: NodeFeature[E1, organization]")[1])
    assert feature.text == "The organization of E1 is: Warsaw Institute." and feature.nodes == ["a2"]


def test_a_short_name_is_never_a_nodes_own_id(tmp_path: Path) -> None:
    """A graph whose own ids look like short names keeps them: the names skip every id the graph has."""
    builder = TypedGraphBuilder()
    for ext, text in (("E1", "Alice Stone"), ("E2", "Bob Reed"), ("p1", "A passage")):
        builder.add_node(ext, "person" if ext.startswith("E") else "passage", {"name": text})
    embedder = HashEmbedder()
    graph = TypedGraph(builder.write(tmp_path / "g.kg", embedder), embedder)
    names = NodeNames(graph, short=True)
    bob, passage = graph.resolve("E2"), graph.resolve("p1")
    assert names.name(bob) == "E3" and names.name(passage) == "P2"  # not E1 (Alice's id), not P1 (p1's)
    assert names.resolve("E1") == graph.resolve("E1") and names.resolve("E3") == bob
    assert names.of_ext(["E2"]) == {"E3": "E2"}
