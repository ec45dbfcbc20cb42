"""ToG-3's MACER loop (Alg. 2) with the scripted LLM, and once through the real HTTP client."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from support import FIXTURES, FakeOpenAIServer, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.run import run_method
from thinkgraph.methods.tog3 import ToG3Config, ToG3Method
from thinkgraph.methods.tog3.agents import parse_triples
from thinkgraph.methods.tog3.subgraph import Subgraph
from thinkgraph.methods.tog3.trajectory import Trajectory, restates
from thinkgraph.testing import ScriptedBackend

NEEDLES = {"keywords": "Give up to", "respond": "Answer the query using only the context",
           "reward": "Judge whether the context", "evolve": "Write the next question",
           "refine": "Refine it:", "final": "Answer the question using only the numbered passages below",
           "final_paper": "Answer the question from the reasoning trajectory",
           "extract": "build a small knowledge graph"}
# the final answer: the one reader (reader="shared", the default) or the paper's FINAL (reader="paper")
FINAL_KINDS = {"final": "final", "final_paper": "final"}
SUFFICIENT = json.dumps({"reason": "the context names who trained her", "verdict": "yes"})
INSUFFICIENT = json.dumps({"reason": "x", "verdict": "no"})
EXTRACTION = json.dumps({"entities": [{"entity_name": "Skarn", "entity_type": "Place"},
                                      {"entity_name": "Kestrel Bay", "entity_type": "Place"}],
                         "relationships": [{"source_entity": "Skarn", "target_entity": "Kestrel Bay",
                                            "relation": "reached by ferry from"}]})


class Script:
    def __init__(self, **replies: list[str] | Callable[[ChatRequest], str]) -> None:
        self.replies = replies
        self.calls: list[str] = []
        self.prompts: list[str] = []
        self.requests: list[str] = []  # each call's last message
        self.backend = ScriptedBackend(rules=[(n, self._reply(FINAL_KINDS.get(k, k))) for k, n in NEEDLES.items()])

    def _reply(self, kind: str):  # noqa: ANN202
        def reply(request: ChatRequest) -> str:
            self.calls.append(kind)
            self.prompts.append(request.messages[0]["content"])
            self.requests.append(request.messages[-1]["content"])
            r = self.replies.get(kind)
            if r is None:
                raise AssertionError(f"unexpected {kind} call")
            if callable(r):
                return r(request)
            return r.pop(0) if len(r) > 1 else r[0]
        return reply


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    path = tmp_path / "t.db"
    settings = Settings()
    settings.index.communities = "always"  # ToG-3 reads communities; an imported graph skips them by default
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"], openie=FIXTURES / "openie_sample.jsonl")
    return path


def method(index_path: Path, script: Script, **options: object) -> tuple[ThinkGraph, ToG3Method]:
    tg = ThinkGraph.open(index_path, settings=Settings(), embedder=HashEmbedder(), backend=script.backend)
    return tg, ToG3Method(MethodContext(tg.store, tg.view, tg.settings, tg.llm), ToG3Config(**options))


async def test_sufficient_at_round_zero(index_path: Path) -> None:
    script = Script(keywords=["Joseph Okafor^trained^teacher"], respond=["Joseph Okafor"], reward=[SUFFICIENT],
                    final=["Joseph Okafor"])
    tg, m = method(index_path, script)
    answer = await run_method(m, "Who trained Lena Sorensen?")
    assert answer.text == "Joseph Okafor" and answer.status == "answered"
    assert script.calls == ["keywords", "respond", "reward", "final"]
    assert m.rounds == {1: 1} and answer.citations and answer.cost.calls == 4
    assert "Joseph Okafor -> trained -> Lena Sorensen" in script.prompts[1]  # triples reached the context
    tg.close()


@pytest.mark.parametrize("reader, echo", [
    ("paper", "Answer the question from the reasoning trajectory and the evidence gathered along it, using"),
    ("shared", "Answer the question using only the numbered passages below (the question is at the end)."),
])
async def test_a_final_reply_that_echoes_the_prompt_is_a_failure(index_path: Path, reader: str, echo: str) -> None:
    script = Script(keywords=["Joseph Okafor^trained^teacher"], respond=["Joseph Okafor"], reward=[SUFFICIENT],
                    final=[echo])
    tg, m = method(index_path, script, reader=reader)
    answer = await run_method(m, "Who trained Lena Sorensen?")
    assert answer.status == "failed" and answer.text is None and answer.citations
    assert answer.message.startswith("the model repeated the prompt's instructions")
    tg.close()


@pytest.mark.parametrize("reader", ["shared", "paper"])
async def test_insufficient_then_sufficient_after_one_evolution(index_path: Path, reader: str) -> None:
    """The trajectory feeds the final answer. The one reader (the default) leaves out the sub-answers that
    are "Unknown" (issue 47); the paper's FINAL shows each question with its own answer."""
    script = Script(keywords=["kw"], respond=["Unknown", "By ferry from Kestrel Bay.", "Kestrel Bay"],
                    reward=[SUFFICIENT],
                    evolve=["Next question: How is Skarn reached?"], extract=[EXTRACTION],
                    refine=lambda r: "Skarn -> reached by ferry from -> Kestrel Bay\n"
                                     "Joseph Okafor -> trained -> Lena Sorensen",
                    final=["Kestrel Bay"])
    tg, m = method(index_path, script, reader=reader)
    answer = await run_method(m, "From which town does the ferry to Skarn leave?")
    assert answer.text == "Kestrel Bay" and m.rounds == {2: 1}
    # round one's "Unknown" is insufficient without a Reflector call (abstention_is_insufficient)
    assert script.calls[:3] == ["keywords", "respond", "evolve"]
    first = next(s for s in answer.trace if s.action == "sufficiency")
    assert first.outputs["reward"] == 0 and "no Reflector call" in first.outputs["reason"]
    assert script.calls[-4:] == ["respond", "respond", "reward", "final"] and "refine" in script.calls
    retrieve_queries = [s.inputs["query"] for s in answer.trace if s.action == "retrieve"]
    assert retrieve_queries == ["From which town does the ferry to Skarn leave?", "How is Skarn reached?"]
    refine = next(s for s in answer.trace if s.action == "refine")
    assert refine.outputs == {"added": [], "removed": [["Adela Morrow", "founded", "Harbor Hill Observatory"],
                                                       ["Harbor Hill Observatory", "founded in", "1887"]]}
    final = script.prompts[-1]  # the trajectory feeds the final answer: each question with its own answer
    assert "- How is Skarn reached? -> By ferry from Kestrel Bay." in final
    unknown = "- From which town does the ferry to Skarn leave? -> Unknown"
    assert (unknown in final) == (reader == "paper")
    if reader == "shared":  # round two's answer, judged sufficient, is known; round one's abstention is not
        assert "Sub-questions answered along the way (sub-question -> answer):" in final
        assert "- From which town does the ferry to Skarn leave? -> Kestrel Bay" in final
    tg.close()


@pytest.mark.parametrize(("again", "evolved", "sub_query"), [
    (True, ["Next question: Which town does the ferry to Skarn leave from?", "Next question: How is Skarn reached?"],
     "How is Skarn reached?"),  # the question reworded: asked again once, told why, and a part of it comes back
    (True, ["Question: From which town does the ferry to Skarn leave?"] * 2,
     "From which town does the ferry to Skarn leave?"),  # restated twice (a label is no word of it): it stands
    (True, ["Next question: From which town does the ferry to Skarn leave?", "None"],
     "From which town does the ferry to Skarn leave?"),  # a STOP after being told: the restated question stands
    (True, ["Next question: From which town does the ferry to Skarn leave?",
            "Write a question about one part of the original question instead: the entity or fact it depends on"],
     "From which town does the ferry to Skarn leave?"),  # a copy of the prompt: the same
    (True, ["Next question: When does the ferry to Skarn leave town?"], "When does the ferry to Skarn leave town?"),
    (False, ["Next question: From which town does the ferry to Skarn leave?"],
     "From which town does the ferry to Skarn leave?"),  # the paper's prompt allows the question itself
    (False, ["The query at the end is the original question. Write the next question that can be answered from"
             " a knowledge source like the context above"],
     "From which town does the ferry to Skarn leave?"),  # a copy of the prompt names no question: the question
])
async def test_a_next_question_that_restates_the_question_is_asked_again_once(
        index_path: Path, again: bool, evolved: list[str], sub_query: str) -> None:
    script = Script(keywords=["kw"], respond=["Unknown", "By ferry from Kestrel Bay."], evolve=list(evolved),
                    extract=[EXTRACTION], refine=["None"], final=["Kestrel Bay"])
    tg, m = method(index_path, script, horizon=1, restated_query_again=again)
    answer = await run_method(m, "From which town does the ferry to Skarn leave?")
    assert script.calls.count("evolve") == len(evolved) and answer.stats["outcome"] == "horizon"
    step = next(s for s in answer.trace if s.action == "evolve_query")
    assert step.outputs["sub_query"] == sub_query and ("restated" in step.outputs) == (len(evolved) == 2)
    told = [r for call, r in zip(script.calls, script.requests, strict=True) if call == "evolve"]
    assert ["asks the original question again" in r for r in told] == [False, True][: len(evolved)]
    assert [s.inputs["query"] for s in answer.trace if s.action == "retrieve"][1] == sub_query
    tg.close()


async def test_the_evolution_is_traced_when_the_budget_ends_the_loop_at_its_second_call(index_path: Path) -> None:
    script = Script(keywords=["kw"], respond=["Unknown"], evolve=["Next question: From which town does the ferry "
                                                                  "to Skarn leave?"], final=["Unknown"])
    tg, m = method(index_path, script, horizon=1, max_calls=4)  # keywords, respond, evolve; one kept for the reader
    answer = await run_method(m, "From which town does the ferry to Skarn leave?")
    assert script.calls == ["keywords", "respond", "evolve", "final"] and answer.stats["outcome"] == "budget_reached"
    step = next(s for s in answer.trace if s.action == "evolve_query")
    assert step.outputs == {"sub_query": "From which town does the ferry to Skarn leave?",
                            "restated": "From which town does the ferry to Skarn leave?"}
    assert step.prompt == "EVOLVE_QUERY, EVOLVE_AGAIN"
    tg.close()


@pytest.mark.parametrize("answer", ["Unknown", "I don't know.", "", "Answer: Unknown"])
async def test_the_reflector_judges_an_abstaining_round_only_when_asked_to(index_path: Path, answer: str) -> None:
    """An abstention ends no loop: without the switch the Reflector is asked (and may say "yes")."""
    script = Script(keywords=["kw"], respond=[answer], reward=[SUFFICIENT], final=["Unknown"])
    tg, m = method(index_path, script, abstention_is_insufficient=False)
    await run_method(m, "From which town does the ferry to Skarn leave?")
    assert script.calls == ["keywords", "respond", "reward", "final"]
    tg.close()


async def test_constructor_extracts_triplets_from_newly_reached_chunks(index_path: Path) -> None:
    script = Script(keywords=["Skarn^island^ferry"], respond=["?"], reward=[INSUFFICIENT, SUFFICIENT],
                    evolve=["Skarn island ferry"], extract=[EXTRACTION], refine=lambda r: r.messages[0]["content"]
                    .split("Sub-graph:\n", 1)[1], final=["Kestrel Bay"])
    tg, m = method(index_path, script, write_triplets=True)  # (the opt-in write-back; the default keeps them)
    answer = await run_method(m, "Skarn island ferry")
    assert "extract" in script.calls
    extracted = next(s for s in answer.trace if s.action == "extract")
    assert extracted.outputs["triples"] == [("Skarn", "reached by ferry from", "Kestrel Bay")]
    edges = [e for e in tg.store.iter_edges(["OPENREL"]) if e.props["predicate"] == "reached by ferry from"]
    assert edges and {p.doc_id for p in tg.store.provenance(edges[0].src)} == {"p3"}
    tg.close()


async def test_horizon_reached(index_path: Path) -> None:
    script = Script(keywords=["kw"], respond=[f"a{i}" for i in range(1, 7)], reward=[INSUFFICIENT],
                    evolve=["q1?", "q2?", "q3?"], extract=[EXTRACTION], refine=lambda r: "None", final=["Unknown"])
    tg, m = method(index_path, script, horizon=3)
    answer = await run_method(m, "Something hard?")
    assert answer.trace[-1].agent == "llm"  # the run envelope's endpoint step closes the trace
    actions = [s.action for s in answer.trace if s.agent != "llm"]  # the method's own steps
    # Alg. 2: K rounds, each insufficient one evolves (K evolutions), every sub-query answered on G_{k+1}
    assert actions.count("sufficiency") == 3 and actions.count("evolve_query") == 3
    assert actions.count("respond") == 6 and actions[-1] == "tog3.final"  # the one reader's step
    assert m.rounds == {3: 1} and answer.status == "abstained"
    assert answer.stats["evolutions"] == 3 and answer.stats["outcome"] == "horizon"
    sub_queries = [s.inputs["query"] for s in answer.trace if s.action == "respond" and s.inputs["sub_query"]]
    assert sub_queries == ["q1?", "q2?", "q3?"]
    tg.close()


async def test_reflector_none_stops(index_path: Path) -> None:
    script = Script(keywords=["kw"], respond=["partial"], reward=[INSUFFICIENT], evolve=["None"], final=["partial"])
    tg, m = method(index_path, script)
    answer = await run_method(m, "Who trained Lena Sorensen?")
    assert script.calls == ["keywords", "respond", "reward", "evolve", "final"]
    assert next(s for s in answer.trace if s.action == "evolve_query").outputs["sub_query"] is None
    assert answer.stats["outcome"] == "reflector_stop"
    assert "1 round(s), 0 evolution(s) of the query and subgraph: the Reflector found nothing more to ask" \
        in answer.message  # the end in words, not the reward's number
    tg.close()


async def test_malformed_outputs_recover_or_are_counted(index_path: Path) -> None:
    script = Script(keywords=["no carets here"], respond=["x"], reward=["maybe?", "still maybe", "no idea", SUFFICIENT],
                    evolve=["Who trained Lena?"], extract=["garbage"], refine=lambda r: "I cannot format this",
                    final=["x"])
    tg, m = method(index_path, script)
    answer = await run_method(m, "Who trained Lena Sorensen?")
    assert tg.llm.meter.parse_failures >= 1  # the reward that never parsed counts as 0 and the loop goes on
    actions = [s.action for s in answer.trace]
    assert "refine.unparsed" in actions and answer.status == "answered"
    tg.close()


async def test_switches_change_the_call_pattern(index_path: Path) -> None:
    script = Script(keywords=["kw"], respond=["a"], reward=[INSUFFICIENT], final=["a"])
    tg, m = method(index_path, script, evolve_query=False, evolve_subgraph=False, horizon=2)
    answer = await run_method(m, "Who trained Lena Sorensen?")
    assert "evolve" not in script.calls and "refine" not in script.calls and "extract" not in script.calls
    retrievals = [s.inputs["query"] for s in answer.trace if s.action == "retrieve"]
    assert retrievals == ["Who trained Lena Sorensen?"] * 3  # each evolution retrieves again for the original
    tg.close()
    script = Script(keywords=["kw"], respond=["a"], reward=[SUFFICIENT], final=["a"])
    tg, m = method(index_path, script, use_communities=False)
    answer = await run_method(m, "Who trained Lena Sorensen?")
    assert not any(n.startswith("com:") for n in answer.trace[0].outputs["top_nodes"])
    tg.close()
    script = Script(keywords=["kw"], respond=["a"], reward=[SUFFICIENT], final=["a"])
    tg, m = method(index_path, script, top_k=40)
    answer = await run_method(m, "Group of entities")
    assert any(n.startswith("com:") for n in answer.trace[0].outputs["top_nodes"])
    tg.close()


def test_parse_triples() -> None:
    assert parse_triples("A -> r -> B\n- C -> s -> D\nnot a triple") == [("A", "r", "B"), ("C", "s", "D")]
    assert parse_triples("None") is None and parse_triples("nothing") == []


async def test_without_an_llm_shows_the_retrievers_evidence(index_path: Path) -> None:
    with ThinkGraph.open(index_path, settings=Settings(), embedder=HashEmbedder()) as tg:
        answer = await tg.aask("Who founded the observatory?", method="tog3")
    assert answer.status == "evidence_only" and answer.text is None and answer.citations
    assert "needs an LLM endpoint" in answer.message
    (step,) = answer.trace
    assert step.action == "retrieve" and step.inputs["keywords"] == []  # no keyword expansion
    # the evidence is a graph: the cited passages and the entities of the triples, linked
    nodes = {n.id: n for n in answer.evidence.nodes}
    assert {c.chunk_id for c in answer.citations} <= set(nodes)
    assert answer.evidence.edges and all(e.src in nodes and e.dst in nodes for e in answer.evidence.edges)
    assert {nodes[e.src].type for e in answer.evidence.edges} == {"entity"}
    assert len(answer.evidence.edges) == len(answer.evidence.path_texts)


async def test_through_the_real_http_client(index_path: Path, settings: Settings) -> None:
    def responder(payload: dict) -> str:
        prompt = payload["messages"][-1]["content"]
        if NEEDLES["keywords"] in prompt:
            return "trained^teacher"
        if NEEDLES["reward"] in prompt:
            return "```json\n" + SUFFICIENT + "\n```"
        return "Joseph Okafor"

    with FakeOpenAIServer() as server:
        server.responder = responder
        settings.llm.base_url = server.url
        with ThinkGraph.open(index_path, settings=settings, embedder=HashEmbedder()) as tg:
            answer = await tg.aask("Who trained Lena Sorensen?", method="tog3", horizon=2)
    assert answer.text == "Joseph Okafor" and answer.cost.calls == 4
    assert answer.cost.prompt_tokens == 44  # the server reports 11 prompt tokens per call


@pytest.mark.parametrize(("outcome", "known"), [
    ("sufficient", ["Q? -> second draft", "Sub? -> sub answer"]),  # the accepted round answer, the last
    ("horizon", ["Sub? -> sub answer"]),  # every round judged insufficient
    ("reflector_stop", ["Sub? -> sub answer"]),
    ("budget_reached", ["Sub? -> sub answer"]),
])
def test_known_answers_keep_only_the_round_answer_the_reflector_accepted(outcome: str, known: list[str]) -> None:
    run = Trajectory("Q?", answers=["first draft", "second draft"], outcome=outcome)
    run.add_step("Sub?", "sub answer", "first draft", 0, Subgraph())
    run.add_step("Other?", "Unknown", "second draft", 0, Subgraph())
    assert run.known_answers() == known


@pytest.mark.parametrize(("sub_query", "same"), [
    ("Who did Barry Wesson's team play in the World Series last year?", True),
    ("Which team did Barry Wesson's team play in the World Series last year", True),  # other wording
    ("Which team did Barry Wesson play for?", False),  # a part of the question
    ("Who won the World Series last year?", False),
    ("When did Barry Wesson's team play in the World Series last year?", False),  # a time, not a team
    ("Who did Barry Wesson's team not play in the World Series last year?", False),
])
def test_a_sub_query_restates_the_question_when_it_has_the_same_content_words(sub_query: str, same: bool) -> None:
    assert restates(sub_query, "Who did Barry Wesson's team play in the World Series last year?") is same
    assert not restates("Who is it?", "What is it?")  # no content word: nothing restated


def test_known_answers_leave_out_a_restated_question_and_an_answer_of_the_wrong_kind() -> None:
    q = "Which of the two tornado outbreaks killed the most people?"
    run = Trajectory(q, answers=["484"], outcome="sufficient")  # accepted, but a count is no outbreak
    run.add_step("Which tornado outbreak killed the most people of the two?", "The 1998 outbreak", "484", 0,
                 Subgraph())  # the question again: a draft answer no Reflector judged
    run.add_step("How many people did the 1998 outbreak kill?", "36", "484", 0, Subgraph())
    run.add_step("Where did the 1998 outbreak start?", "1985", "484", 0, Subgraph())  # a year for "where"
    assert run.known_answers() == ["How many people did the 1998 outbreak kill? -> 36"]


def test_a_sub_query_that_poses_the_questions_own_choice_restates_it() -> None:
    q = "Which singer is American, Mark King or Nick Hexum?"
    assert restates("Who is American, Mark King or Nick Hexum?", q)  # other words, the same two options
    assert not restates("What nationality is Mark King?", q)  # one part of the choice
    run = Trajectory(q, answers=["Mark King"], outcome="horizon")  # the Reflector rejected "Mark King"
    run.add_step("Who is American, Mark King or Nick Hexum?", "Mark King", "Mark King", 0, Subgraph())
    run.add_step("What nationality is Mark King?", "English", "Mark King", 0, Subgraph())
    assert run.known_answers() == ["What nationality is Mark King? -> English"]
