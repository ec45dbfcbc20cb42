"""kgr's agent actions against a small typed graph with known answers, including unknown ids, edge
types and features, and the parsing of model steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.methods.kgr.actions import Action, GraphEnvironment, parse_step
from thinkgraph.typedkg import TypedGraph, TypedGraphBuilder
from thinkgraph.typedkg.importers import load_grbench


@pytest.fixture
def env(tmp_path: Path) -> GraphEnvironment:
    builder = TypedGraphBuilder()
    load_grbench(FIXTURES / "grbench_small.json", builder)
    embedder = HashEmbedder()
    return GraphEnvironment(TypedGraph(builder.write(tmp_path / "g.kg", embedder), embedder), max_neighbors=1)


def run(env: GraphEnvironment, text: str):  # noqa: ANN201
    return env.run(parse_step(text)[1])


def test_each_action_returns_the_known_answer(env: GraphEnvironment) -> None:
    found = run(env, "Action: RetrieveNode[Tomasz Nowak]")
    assert found.text == "The most related node is a2 (author: Tomasz Nowak)." and found.nodes == ["a2"]
    feature = run(env, "Action: NodeFeature[a2, organization]")
    assert feature.text == "The organization of a2 is: Warsaw Institute." and not feature.invalid
    degree = run(env, "Action: NodeDegree[v2, paper]")
    assert degree.text == "Node v2 has 2 paper neighbours."
    neighbours = run(env, "Action: NeighbourCheck[p2, cited_by]")  # British spelling, max_neighbors=1
    assert neighbours.text == ("The cited_by neighbours of p2 are: [p1 (Graph reasoning with language models)] "
                               "(and 1 more).")
    assert neighbours.nodes == ["p2", "p1"]
    done = run(env, "Thought: done.\nAction: Finish[Maria Lindqvist, Tomasz Nowak]")
    assert done.answer == "Maria Lindqvist, Tomasz Nowak"


@pytest.mark.parametrize(("step", "message"), [
    ("Action: NodeFeature[p9, title]", "there is no node 'p9' in the graph."),
    ("Action: NeighborCheck[p1, writer]", "unknown edge type 'writer'; the edge types of p1 are: author, venue, "
                                          "reference."),
    ("Action: NodeFeature[p1, colour]", "Node p1 has no feature 'colour'; its features are: title, year, keywords."),
    ("Action: NodeDegree[p1]", "NodeDegree takes two arguments; got NodeDegree[p1]."),
    ("Action: RetrieveNode[]", "RetrieveNode needs a text to search for."),
    ("I will look it up.", "Invalid action. Use RetrieveNode[text]"),
])
def test_bad_actions_become_observations(env: GraphEnvironment, step: str, message: str) -> None:
    observation = run(env, step)
    assert observation.invalid and observation.text.startswith(message)


def test_parse_steps_in_the_formats_models_write() -> None:
    thought, actions = parse_step("Thought 3: Retrieve the names.\nAction 3: NodeFeature[U:1, name], "
                                  "NodeFeature[U:2, name]\nObservation 3: invented by the model")
    # several actions in one step, as Graph-CoT's App. G example issues them
    assert thought == "Retrieve the names." and actions == [Action("NodeFeature", ("U:1", "name")),
                                                            Action("NodeFeature", ("U:2", "name"))]
    run_on = parse_step("Thought: x\nAction: RetrieveNode[A] Thought 2: more\nAction 2: Finish[B]")[1]
    assert run_on == [Action("RetrieveNode", ("A",))]  # the next step's actions are not this step's
    assert parse_step("thought: x\naction: finish[a, b]")[1] == [Action("Finish", ("a, b",))]
    assert parse_step("Action: RetrieveNode[Smith, John]")[1] == [Action("RetrieveNode", ("Smith, John",))]
    assert parse_step("no action at all") == ("no action at all", [])


def test_runaway_react_reply_counts_only_its_first_action() -> None:
    """A model without a stop sequence writes on: invented observations, more thoughts and a Finish
    that the graph never answered. Only the first action is executed."""
    runaway = ("Sure! Let me think.\nThought 1: I need the lab's head.\nAction 1: RetrieveNode[Harbor Hill]\n"
               "Observation 1: The node is n7.\nThought 2: So the head is Ada.\nAction 2: Finish[Ada]\n"
               "Observation 2: Finished: Ada\nThought 3: Done.")
    thought, actions = parse_step(runaway)
    assert actions == [Action("RetrieveNode", ("Harbor Hill",))]
    assert "Ada" not in thought and "Observation" not in thought
    # an invented observation before any action leaves no action at all
    assert parse_step("Thought: easy.\nObservation: it is Ada.\nAction: Finish[Ada]")[1] == []


def test_several_actions_and_long_observations(env: GraphEnvironment) -> None:
    both = env.run([Action("NodeFeature", ("a1", "name")), Action("NodeFeature", ("a3", "name"))])
    assert both.text == "The name of a1 is: Maria Lindqvist. The name of a3 is: Aiko Tanaka."
    env.max_chars = 200
    long = env.run([Action("NodeFeature", ("p1", "title"))] * 10)
    assert long.text.endswith("... (cut)") and len(long.text) == 200 + len(" ... (cut)")


def test_edge_types_lists_a_nodes_edge_types_most_neighbours_first(env: GraphEnvironment) -> None:
    """EdgeTypes[node id] (ours, offered when the graph definition cannot list every edge type)."""
    listed = run(env, "Thought: which relations?\nAction: EdgeTypes[p1]")  # max_neighbors=1
    assert listed.text == "The edge types of p1, with its neighbours along each, are: [author (2)] (and 2 more)."
    assert listed.nodes == ["p1"] and not listed.invalid
    env.max_neighbors = 50
    assert run(env, "Action: edgetypes['p1']").text.endswith("are: [author (2), venue (1), reference (1)].")
    assert run(env, "Action: EdgeTypes[p9]").text == "there is no node 'p9' in the graph."
    assert run(env, "Action: EdgeTypes[p1, author]").invalid


def test_an_edge_type_named_up_to_case_underscores_and_spaces_is_the_nodes_own(env: GraphEnvironment) -> None:
    """Models write "located_in" for a corpus graph's "located in" and "Cited By" for "cited_by"."""
    env.max_neighbors = 50
    assert run(env, "Action: NeighborCheck[p2, Cited By]").text.startswith("The cited_by neighbours of p2 are: [p1")
    assert run(env, "Action: NodeDegree[p1, AUTHOR]").text == "Node p1 has 2 author neighbours."
    assert run(env, "Action: NeighborCheck[p2, cited-by]").nodes[:2] == ["p2", "p1"]
