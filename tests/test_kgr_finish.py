"""kgr's steps for small instruct models (ours, issue #39): the agent's prompt names the step to write and
the question last; a reply with no action is asked again once, within the chain's n calls; an action the
chain already took is not run again; Finish[answer] is read like every method's answer; and a chain that
has not finished by its last step answers there from what it found (``finish_at_limit``), citing the
passages its reply cited. ``finish_at_limit = false`` keeps the paper's form (tests/test_kgr_method.py).
On a corpus-built index the one reader answers when the chain ends (``reader="shared"``, the default
since issue 47) and no finishing step runs, so the finishing step's tests there ask for ``reader="paper"``;
an imported KG has no passages and finishes the same either way."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from support import FIXTURES, HashEmbedder
from test_kgr_grounding import QUESTION, observations, task
from test_kgr_method import AGENT, MERGE, SELECT, calls, explore_rules, unique_steps
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.kgr.actions import Action, GraphEnvironment, parse_step
from thinkgraph.methods.kgr.agent import AgentStepper
from thinkgraph.methods.kgr.prompts import AGENT_STEP
from thinkgraph.methods.kgr.state import SHORT_OBSERVATION, ChainState, Step
from thinkgraph.methods.kgr.trace import Recorder
from thinkgraph.testing import ScriptedBackend
from thinkgraph.typedkg import TypedGraph
from thinkgraph.typedkg.builder import TypedGraphBuilder
from thinkgraph.typedkg.importers import load_grbench

LAST_STEP = "This is the last step"
REPAIR = "Your reply has no action"
PAPER = {"reader": "paper"}  # the chain's own answer, and the finishing step at the limit


def prompt_of(request: ChatRequest) -> str:
    return request.messages[-1]["content"]


def bridge_walker(request: ChatRequest) -> str:
    """Finds Alice Stone, then her `founded` neighbour, then wanders (it never writes Finish)."""
    seen = observations(task(request))
    if not seen:
        return "Thought: I need Alice Stone.\nAction: RetrieveNode[Alice Stone]"
    if len(seen) == 1:
        alice = re.search(r"(ent:\w+) \(", seen[0]).group(1)
        return f"Thought: What did she found?\nAction: NeighborCheck[{alice}, founded]"
    return f"Thought: more.\nAction: RetrieveNode[thing {len(seen)}]"


def cite(sentence: str, answer: str) -> ChatRequest:
    """A finishing reply citing the numbered passage that contains ``sentence``."""
    def reply(request: ChatRequest) -> str:
        number = re.search(r"\[(\d+)\] [^\n]*" + re.escape(sentence), prompt_of(request)).group(1)
        return f"Reasoning: it is stated in [{number}].\nAnswer: {answer} [{number}]"
    return reply  # type: ignore[return-value]


async def test_a_chain_that_has_not_finished_answers_at_its_last_step_and_cites_what_it_cited(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(LAST_STEP, cite("based in Rivertown", "Rivertown")), (AGENT, bridge_walker)])
    answer = await open_bridge(backend).aask(QUESTION, "kgr", steps=3, **PAPER)
    assert answer.text == "Rivertown" and answer.status == "answered"
    assert answer.stats["outcome"] == "finished_at_limit" and answer.stats["steps"] == 3
    assert answer.cost.calls == 3 and calls(backend, AGENT) == 2  # the n-th call is the finishing step
    assert [c.doc_id for c in answer.citations] == ["c2"]  # the passage the reply cited, not all it was shown
    last = prompt_of(backend.requests[-1])
    assert "Action 2: NeighborCheck[" in last and "Passages that mention the nodes the steps reached:" in last
    assert "Acme Corp is based in Rivertown." in last and "Alice Stone founded Acme Corp" in last
    assert last.endswith(f"Question: {QUESTION}")  # the question last, next to the reply
    assert "answered at the step limit (3)" in answer.message
    finish = next(s for s in answer.trace if s.action == "kgr.finish")
    assert finish.outputs["status"] == "answered" and len(finish.inputs["passages"]) >= 2
    assert [s.action for s in answer.trace if s.agent == "reasoner"][-1] == "finish"


async def test_the_finishing_step_may_abstain_or_fail(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(LAST_STEP, "Reasoning: nothing says so.\nAnswer: Unknown"),
                                     (AGENT, bridge_walker)])
    answer = await open_bridge(backend).aask(QUESTION, "kgr", steps=3, **PAPER)
    assert answer.status == "abstained" and answer.text == "Unknown"
    assert answer.stats["outcome"] == "finished_at_limit"
    # a reply that repeats the prompt's example is no answer: the chain reached its limit
    echo = "Ada Kowal attended Dunmore College, and Dunmore College was founded in 1881."
    backend = ScriptedBackend(rules=[(LAST_STEP, echo), (AGENT, bridge_walker)])
    answer = await open_bridge(backend).aask(QUESTION + " (again)", "kgr", steps=3, **PAPER)
    assert answer.status == "failed" and answer.text is None and answer.stats["outcome"] == "reached_limit"
    assert "the finishing step gave none: the model repeated the prompt's instructions" in answer.message
    # nor is one that repeats the step prompt the chain's steps quoted (Gemma 3 270M's finishing reply)
    copied = AGENT_STEP.split("\n", 1)[0]
    backend = ScriptedBackend(rules=[(LAST_STEP, copied), (AGENT, bridge_walker)])
    answer = await open_bridge(backend).aask(QUESTION + " (copied)", "kgr", steps=3, **PAPER)
    assert answer.status == "failed" and answer.text is None and answer.stats["outcome"] == "reached_limit"


async def test_a_chain_of_one_step_and_the_papers_form_have_no_finishing_step(open_bridge) -> None:  # noqa: ANN001
    for options in ({"steps": 1, **PAPER}, {"steps": 3, "finish_at_limit": False, **PAPER}):
        backend = ScriptedBackend(rules=[(LAST_STEP, "Answer: Rivertown"), (AGENT, bridge_walker)])
        answer = await open_bridge(backend).aask(f"{QUESTION} {options}", "kgr", **options)
        assert answer.status == "failed" and answer.stats["outcome"] == "reached_limit"
        assert calls(backend, LAST_STEP) == 0 and answer.cost.calls == options["steps"]


async def test_on_an_imported_kg_the_finishing_step_reads_the_steps_and_cites_nothing(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["Thought: the paper.\nAction: RetrieveNode[Graph reasoning with language models]",
                                      "Reasoning: step 1 found it.\nAnswer: Graph reasoning with language models"])
    answer = await kg(backend).aask("Which paper?", "kgr", steps=2)
    assert answer.text == "Graph reasoning with language models" and answer.status == "answered"
    assert answer.stats["outcome"] == "finished_at_limit" and not answer.citations
    last = prompt_of(backend.requests[-1])
    assert "Passages" not in last and "from what the steps found" in last and "Observation 1: The most related" in last


async def test_a_reply_with_no_action_is_asked_again_once_within_the_step_budget(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=[
        "I think the paper is about graphs.",  # no action: asked again
        "Thought 1: find the paper.\nAction 1: RetrieveNode[Graph reasoning with language models]",
        "It was written by Maria.",  # no action again, but a repair would leave no room for the finish
        "Reasoning: the paper was found.\nAnswer: Maria Lindqvist"])
    answer = await kg(backend).aask("Who wrote the graph reasoning paper?", "kgr", steps=4)
    assert answer.cost.calls == 4  # the repair counts against the n steps
    repair = backend.requests[1].messages
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert repair[1]["content"] == "I think the paper is about graphs." and REPAIR in repair[2]["content"]
    steps = [s for s in answer.trace if s.action == "step"]
    assert steps[0].outputs["thought"] == "find the paper." and steps[0].outputs["nodes"] == ["p1"]
    assert steps[1].outputs["observation"].startswith("Invalid action.")
    assert answer.stats["repairs"] == 1 and answer.stats["invalid_actions"] == 1
    assert answer.text == "Maria Lindqvist" and answer.stats["outcome"] == "finished_at_limit"


async def test_a_repair_that_still_has_no_action_is_an_invalid_step(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["Hmm.", "Still thinking.", "Thought: x.\nAction: RetrieveNode[Maria Lindqvist]",
                                      "Thought: x.\nAction: Finish[Maria Lindqvist]"])
    answer = await kg(backend).aask("q?", "kgr", steps=5)
    assert answer.stats["repairs"] == 1 and answer.stats["invalid_actions"] == 1 and answer.cost.calls == 4
    assert "Observation 1: Invalid action." in prompt_of(backend.requests[2])
    assert answer.text == "Maria Lindqvist" and answer.stats["outcome"] == "finished"
    backend = ScriptedBackend(script=["Hmm.", "Thought: x.\nAction: Finish[y]"])
    answer = await kg(backend).aask("q again?", "kgr", steps=5, repair=False)
    assert "repairs" not in answer.stats and answer.stats["invalid_actions"] == 1


async def test_a_repeated_step_is_asked_again_once_with_the_actions_that_could_follow(open_bridge) -> None:  # noqa: ANN001
    def walker(request: ChatRequest) -> str:
        turns = [m["content"] for m in request.messages]
        if len(turns) == 1:
            return "Thought 1: find her.\nAction 1: RetrieveNode[Alice Stone]"
        if "Step 2 found nothing new" in turns[-1]:  # the repair of a step that found the same node
            alice = re.search(r"NeighborCheck\[(ent:\w+), mentioned_in\]", turns[-1]).group(1)
            return f"Thought 2: read her passages.\nAction 2: NeighborCheck[{alice}, mentioned_in]"
        if "Step 3 repeats step 2" in turns[-1]:  # still a repeat after the repair: the step is recorded as one
            return "Thought 3: again.\nAction 3: " + re.search(r"Action 3: (.*)", turns[-2]).group(1).lower()
        if len(turns) == 3:
            return "Thought 2: her company.\nAction 2: RetrieveNode[Alice Stone's company]"  # finds Alice again
        return "Thought 3: again.\nAction 3: " + re.search(r"Action 2: (.*)", turns[-2]).group(1)

    backend = ScriptedBackend(rules=[(LAST_STEP, "Answer: Unknown"), (AGENT, walker)])
    answer = await open_bridge(backend).aask(QUESTION, "kgr", steps=6, **PAPER)
    repair = backend.requests[2].messages
    assert [m["role"] for m in repair] == ["user", "assistant", "user", "assistant", "user"]
    alice = re.search(r"(ent:\w+) \(entity: Alice Stone\)", repair[2]["content"]).group(1)
    assert repair[-1]["content"] == (
        "Step 2 found nothing new: RetrieveNode[Alice Stone's company] gives what step 1 found. Write step 2 again "
        f"with a new action: NeighborCheck[{alice}, mentioned_in] (not tried yet), RetrieveNode[<name>] for what "
        "the observations name that the question needs next, or Finish[<the answer>] when an observation gives it.")
    second_repair = backend.requests[4].messages[-1]["content"]  # what is suggested leaves out what was taken
    assert second_repair.startswith("Step 3 repeats step 2: NeighborCheck[")
    assert re.search(r"new action: NodeFeature\[chunk:\w+, text\] \(not tried yet\), RetrieveNode", second_repair)
    steps = [s.outputs for s in answer.trace if s.action == "step"]
    assert steps[1]["action"].startswith("NeighborCheck[")
    assert "Alice Stone founded Acme Corp" in steps[1]["observation"]
    assert steps[2]["observation"].startswith(f"{steps[2]['action']} was already done at step 2")
    assert steps[2]["nodes"] == []  # not run again
    assert answer.stats["repairs"] == 2 and answer.stats["repeated_actions"] == 1
    assert answer.cost.calls == 6  # 1 + 2 + 2 + the finishing step: the repairs count against the n steps


async def test_without_repair_a_repeated_action_is_told_back_and_a_node_id_answer_is_its_name(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["Thought: find it.\nAction: RetrieveNode[Graph reasoning with language models]",
                                      "Thought: again.\nAction: retrievenode[ 'Graph reasoning with language models' ]",
                                      "Thought: that is the paper.\nAction: Finish[p1]"])
    answer = await kg(backend).aask("Which paper is about graph reasoning?", "kgr", repair=False)
    repeated = [s for s in answer.trace if s.action == "step"][1].outputs
    assert repeated["observation"].startswith("RetrieveNode['Graph reasoning with language models'] was already done "
                                              "at step 1") and repeated["nodes"] == []
    assert prompt_of(backend.requests[2]).startswith("Observation 2: RetrieveNode[")
    assert answer.stats["repeated_actions"] == 1 and "repairs" not in answer.stats
    assert answer.text == "Graph reasoning with language models"  # p1, a node the chain saw, by its name


async def test_a_finish_that_no_observation_supports_is_asked_again_once(open_bridge) -> None:  # noqa: ANN001
    def walker(request: ChatRequest) -> str:
        turns = [m["content"] for m in request.messages]
        if len(turns) == 1:
            return "Thought 1: find her.\nAction 1: RetrieveNode[Alice Stone]"
        if turns[-1].startswith('No observation above says "Paris"'):
            alice = re.search(r"NeighborCheck\[(ent:\w+), mentioned_in\] \(not tried yet\)", turns[-1]).group(1)
            return f"Thought 2: read her passages.\nAction 2: NeighborCheck[{alice}, mentioned_in]"
        if len(turns) == 3:
            return "Thought 2: I know it.\nAction 2: Finish[Paris]"  # from the model's own knowledge
        return "Thought 3: she founded Acme Corp in 1990.\nAction 3: Finish[Acme Corp]"

    backend = ScriptedBackend(rules=[(AGENT, walker)])
    answer = await open_bridge(backend).aask("Which company did Alice Stone found?", "kgr", **PAPER)
    assert backend.requests[2].messages[-1]["content"].startswith(
        'No observation above says "Paris". Write step 2 again with a new action: NeighborCheck[')
    assert answer.text == "Acme Corp" and answer.stats["repairs"] == 1 and answer.cost.calls == 4
    assert [s.outputs["action"] for s in answer.trace if s.action == "step"][1].startswith("NeighborCheck[")


async def test_the_formats_placeholder_is_no_answer(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["Thought: done.\nAction: Finish[answer]",
                                      "Thought: it is Maria.\nAction: Finish[<answer>]",
                                      "Thought: find her.\nAction: RetrieveNode[Maria Lindqvist]",
                                      "Thought: done.\nAction: Finish[Maria Lindqvist]"])
    answer = await kg(backend).aask("Who wrote it?", "kgr", steps=5)
    assert backend.requests[1].messages[-1]["content"] == (
        "Finish[answer] copies the format, not an answer. Write step 1 again with a new action: RetrieveNode[<name>] "
        "for what the observations name that the question needs next, or Finish[<the answer>] when an observation "
        "gives it.")
    assert answer.stats["repairs"] == 1 and answer.stats["invalid_actions"] == 1
    assert prompt_of(backend.requests[2]).startswith("Observation 1: Finish[<answer>] repeats the format")
    assert answer.text == "Maria Lindqvist" and answer.stats["outcome"] == "finished"


async def test_finish_is_read_like_every_methods_answer(kg) -> None:  # noqa: ANN001
    cases = [("Finish[The answer is Warsaw Institute [2].]", "Warsaw Institute", "answered", "finished"),
             ("Finish[Unknown]", "Unknown", "abstained", "finished"),
             ("Finish[4]", "4", "answered", "finished")]  # a number stays a number (no node the chain saw)
    for i, (reply, text, status, outcome) in enumerate(cases):
        backend = ScriptedBackend(script=[f"Thought: done.\nAction: {reply}"])
        answer = await kg(backend).aask(f"q {i}?", "kgr", repair=False)  # (no observation says them)
        assert (answer.text, answer.status, answer.stats["outcome"]) == (text, status, outcome)
    backend = ScriptedBackend(script=["Thought: done.\nAction: Finish[ ]", "Thought: done.\nAction: Finish[x]"])
    answer = await kg(backend).aask("q empty?", "kgr", repair=False)
    assert answer.text == "x" and answer.stats["invalid_actions"] == 1
    assert "Observation 1: Finish needs the answer inside the brackets" in prompt_of(backend.requests[1])


async def test_the_steps_so_far_are_turns_and_the_last_names_the_step_and_the_question(kg, open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["Thought: x.\nAction: RetrieveNode[Aiko Tanaka]",
                                      "Thought: y.\nAction: NodeFeature[a3, name]",
                                      "Thought: z.\nAction: Finish[Aiko]"])
    await kg(backend).aask("Who is Aiko?", "kgr", steps=5)
    first, second, third = (r.messages for r in backend.requests)
    assert len(first) == 1 and first[0]["content"].endswith(
        'Question: Who is Aiko?\nNow write step 1 of at most 5 for the question "Who is Aiko?".')
    assert second[0] == first[0]  # the task, unchanged: a server's prompt cache keeps it
    assert [m["role"] for m in third] == ["user", "assistant", "user", "assistant", "user"]
    assert second[1]["content"] == "Thought 1: x.\nAction 1: RetrieveNode[Aiko Tanaka]"
    assert second[2]["content"].startswith("Observation 1: The most related node is a3 (author: Aiko Tanaka).\n\n")
    assert second[2]["content"].endswith("When an observation gives what the question finally asks for (not a fact "
                                         "on the way to it), write Finish[answer].")
    assert 'Now write step 2 of at most 5 for the question "Who is Aiko?": a Thought' in second[2]["content"]
    assert third[2]["content"] == second[2]["content"].split("\n\n")[0]  # only the last turn closes
    assert "Only 3 steps are left, this one included" in third[4]["content"]
    # the worked example fits the graph: the academic one on an imported KG, passages on a corpus-built index
    assert "Here are some examples:" in first[0]["content"] and "NeighborCheck[P31, author]" in first[0]["content"]
    backend = ScriptedBackend(script=["Thought: x.\nAction: Finish[y]"])
    await open_bridge(backend).aask("q?", "kgr", repair=False)
    corpus = prompt_of(backend.requests[0])
    assert "Here is an example:" in corpus and "NeighborCheck[ent:3f2a91c0, mentioned_in]" in corpus
    assert "P31" not in corpus
    backend = ScriptedBackend(script=["Thought: x.\nAction: Finish[y]"])
    await open_bridge(backend).aask("q?", "kgr", repair=False, node_names="short")  # the example as it will see
    assert "NeighborCheck[E1, mentioned_in]" in prompt_of(backend.requests[0])


def test_a_long_chain_shortens_its_oldest_observations_in_the_turns(kg, tmp_path: Path) -> None:  # noqa: ANN001
    builder = TypedGraphBuilder()
    load_grbench(FIXTURES / "grbench_small.json", builder)
    env = GraphEnvironment(TypedGraph(builder.write(tmp_path / "g.kg", HashEmbedder()), HashEmbedder()))
    stepper = AgentStepper(kg(ScriptedBackend()).llm, env, "q?", Recorder(), itertools.count(1), limit=10)
    assert stepper.scratchpad_chars > 10_000  # the default 8,192-token window leaves room for a long chain
    stepper.scratchpad_chars = 2700
    state = ChainState(0, [Step(f"t{i}", f"RetrieveNode[{i}]", str(i) * 1000) for i in range(4)], depth=4)
    turns = [m["content"] for m in stepper.messages(state, "")[2::2]]
    assert turns[0] == f"Observation 1: {'0' * SHORT_OBSERVATION} ... (shortened)"
    assert turns[1] == f"Observation 2: {'1' * SHORT_OBSERVATION} ... (shortened)"
    assert turns[2] == f"Observation 3: {'2' * 1000}" and turns[3].startswith(f"Observation 4: {'3' * 1000}\n\n")


async def test_tree_strategies_finish_each_kept_state_at_the_last_level(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 1, 2"), (LAST_STEP, "Answer: Maria Lindqvist"),
                                     (AGENT, unique_steps())])
    answer = await kg(backend).aask("q?", "kgr", strategy="tot", k=3, t=2, steps=2)
    assert calls(backend, AGENT) == 3 and calls(backend, LAST_STEP) == 2  # one finishing call per kept state
    assert answer.text == "Maria Lindqvist" and answer.stats["outcome"] == "finished_at_limit"
    merged = itertools.count(1)
    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 1, 2"), (LAST_STEP, "Answer: Maria Lindqvist"),
                                     (MERGE, lambda r: f"Thought: merged {next(merged)}.\nAction: RetrieveNode[x]"),
                                     (AGENT, unique_steps())])
    answer = await kg(backend).aask("q got?", "kgr", strategy="got", k=2, t=2, steps=2)
    assert calls(backend, MERGE) == 1 and answer.stats["merges"] == 1  # none among the finishing states
    assert calls(backend, LAST_STEP) == 2 and answer.text == "Maria Lindqvist"


async def test_explore_chains_finish_at_the_limit_too(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["I need the authors of the graph reasoning paper."],
                              rules=[(LAST_STEP, "Reasoning: the triples list them.\nAnswer: Maria Lindqvist"),
                                     *explore_rules()])
    answer = await kg(backend).aask("Who wrote the graph reasoning paper?", "kgr", interaction="explore", steps=2)
    assert answer.text == "Maria Lindqvist" and answer.stats["outcome"] == "finished_at_limit"
    last = prompt_of(backend.requests[-1])
    assert "Triples:\nGraph reasoning with language models -> author -> Maria Lindqvist" in last


def test_a_long_scratchpad_shortens_its_oldest_observations_first() -> None:
    state = ChainState(0, [Step(f"t{i}", f"RetrieveNode[{i}]", str(i) * 1000) for i in range(4)], depth=4)
    assert state.scratchpad() == state.scratchpad(100_000) and len(state.scratchpad()) > 4000
    bounded = state.scratchpad(2700)
    assert f"Observation 1: {'0' * SHORT_OBSERVATION} ... (shortened)\n" in bounded
    assert f"Observation 2: {'1' * SHORT_OBSERVATION} ... (shortened)\n" in bounded
    assert f"Observation 3: {'2' * 1000}\n" in bounded and f"Observation 4: {'3' * 1000}" in bounded
    one = state.scratchpad(3600)  # only as many as the bound needs
    assert one.count("(shortened)") == 1 and f"Observation 1: {'0' * SHORT_OBSERVATION} ... (shortened)" in one


def test_the_format_lines_placeholder_copied_as_it_is_still_parses() -> None:
    assert parse_step("Thought <n>: find it.\nAction <n>: RetrieveNode[Acme]") == (
        "find it.", [Action("RetrieveNode", ("Acme",))])
    assert parse_step("Thought 3: go.\nAction 3: Finish[x]\nObservation <n>: made up")[1] == [Action("Finish", ("x",))]


async def test_passages_in_a_neighbour_list_show_the_start_of_their_text(tmp_path: Path) -> None:
    """A corpus-built graph labels a passage with its title and 120 characters; a neighbour list shows
    the first 400 (actions.PASSAGE_CHARS), where the facts a step needs usually are."""
    filler = "The club was founded long ago and has played in many leagues over the decades since then. "
    text = "Barry Wesson is an outfielder. " + filler * 3 + "He played for the Houston Astros. " + filler * 3
    docs, openie = tmp_path / "corpus.jsonl", tmp_path / "openie.jsonl"
    docs.write_text(json.dumps({"id": "d1", "title": "Barry Wesson", "text": text}) + "\n")
    openie.write_text(json.dumps({"doc_id": "d1", "entities": ["Barry Wesson", "Houston Astros"],
                                  "triples": [["Barry Wesson", "played for", "Houston Astros"]]}) + "\n")
    with ThinkGraph(tmp_path / "long.db", settings=Settings(), embedder=HashEmbedder(), create=True) as tg:
        tg.index([docs], openie=openie)

    def walker(request: ChatRequest) -> str:
        turns = [m["content"] for m in request.messages]
        if len(turns) == 1:
            return "Thought: find him.\nAction: RetrieveNode[Barry Wesson]"
        node = re.search(r"node is (ent:\w+) \(", turns[2]).group(1)
        return f"Thought: his passages.\nAction: NeighborCheck[{node}, mentioned_in]" if len(turns) == 3 else \
            "Thought: done.\nAction: Finish[Houston Astros]"

    backend = ScriptedBackend(rules=[(AGENT, walker)])
    with ThinkGraph.open(tmp_path / "long.db", settings=Settings(), embedder=HashEmbedder(), backend=backend) as tg:
        answer = await tg.aask("Which team did Barry Wesson play for?", "kgr", **PAPER)
    listed = [s.outputs["observation"] for s in answer.trace if s.action == "step"][1]
    assert "He played for the Houston Astros." in listed and listed.endswith("...)].")
    assert f"(Barry Wesson: {text[:400]}...)" in listed
    assert answer.text == "Houston Astros" and [c.doc_id for c in answer.citations] == ["d1"]
