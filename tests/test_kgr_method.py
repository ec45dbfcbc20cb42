"""kgr with the scripted LLM: every strategy x interaction pair, evaluator choices, pruning, merges,
step limits, LLM call counts against App. E's formulas, baselines, and a corpus-built index."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.testing import ScriptedBackend

AGENT = "alternating Thought, Action and Observation"
SELECT = "Several reasoning chains"
SCORE = "Estimate the probability"
MERGE = "Two reasoning chains over a knowledge graph"
THOUGHT = "Think step by step towards the answer"
END = "Are the thoughts and the knowledge-graph facts"
READ = "Answer the question using only the numbered passages below"  # the one reader (kgr.read)


def calls(backend: ScriptedBackend, needle: str) -> int:
    """Calls whose conversation holds ``needle`` (an agent step's task is its first message)."""
    return sum(any(needle in m["content"] for m in r.messages) for r in backend.requests)


def read_own_answer(request) -> str:  # noqa: ANN001
    """The one reader on a corpus-built index (issue 47): it answers with the chain's own Finish, which
    the reader's notes show, citing the first passage shown (the one the chain read first)."""
    own = re.search(r"The graph search's own answer:\n- (.*)", request.messages[-1]["content"])
    return f"Asks for: the answer\nFacts: the graph search found it [1].\nAnswer: {own.group(1)} [1]" if own \
        else "Answer: Unknown"


def unique_steps(action: str = "RetrieveNode[graph reasoning]") -> Callable:
    counter = itertools.count(1)
    return lambda request: f"Thought: idea {next(counter)}.\nAction: {action}"


async def test_cot_agent_walks_the_graph_and_finishes(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=[
        "Thought: Find the paper.\nAction: RetrieveNode[Graph reasoning with language models]",
        "Thought: Its authors.\nAction: NeighborCheck[p1, author]",
        "Thought: Where does the second work?\nAction: NodeFeature[a2, organization]",
        "Thought: Done.\nAction: Finish[Warsaw Institute]"])
    answer = await kg(backend).aask("Where does the second author of the graph reasoning paper work?", "kgr")
    assert answer.text == "Warsaw Institute" and answer.status == "answered"
    assert answer.stats["outcome"] == "finished" and answer.stats["steps"] == 4 and answer.cost.calls == 4
    assert [n.id for n in answer.evidence.nodes] == ["p1", "a1", "a2"]
    steps = [s for s in answer.trace if s.action == "step"]
    assert steps[1].outputs["observation"].startswith("The author neighbours of p1 are: [a1 (Maria Lindqvist)")
    assert "Observation 2: The author neighbours of p1" in backend.requests[2].messages[-1]["content"]
    assert "edge type author: paper -> author" in backend.requests[0].messages[-1]["content"]


async def test_invalid_action_is_reported_back_and_the_step_limit_ends_the_chain(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["I am not sure what to do.", "Thought: look.\nAction: NodeFeature[zz, name]",
                                      "Thought: again.\nAction: RetrieveNode[Aiko Tanaka]"])
    answer = await kg(backend).aask("Who is Aiko?", "kgr", steps=3, finish_at_limit=False, repair=False)
    assert answer.status == "failed" and answer.text is None and "step limit (3)" in answer.message
    assert answer.stats == {"outcome": "reached_limit", "states": 3, "steps": 3, "invalid_actions": 2,
                            "parse_failures": 0}  # steps: the chain's, though it did not finish
    second = backend.requests[1].messages[-1]["content"]
    assert "Observation 1: Invalid action. Use RetrieveNode[text]" in second
    assert "Observation 2: there is no node 'zz' in the graph." in backend.requests[2].messages[-1]["content"]


@pytest.mark.parametrize(("k", "t", "depth"), [(2, 2, 3), (3, 1, 3), (1, 2, 2)])
async def test_tot_select_call_count_matches_app_e(kg, k: int, t: int, depth: int) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 1, 2"), (AGENT, unique_steps())])
    answer = await kg(backend).aask("q?", "kgr", strategy="tot", k=k, t=t, steps=depth, retain="per_parent",
                                    finish_at_limit=False, repair=False)  # the paper's form
    expanded = sum(min(k, t) ** i for i in range(depth))  # (t^D - 1) / (t - 1) when t <= k
    assert calls(backend, AGENT) == k * expanded and calls(backend, SELECT) == expanded
    assert answer.stats["outcome"] == "reached_limit" and answer.stats["states"] == k * expanded


async def test_tot_score_evaluator_keeps_the_best_and_returns_the_best_finished(kg) -> None:  # noqa: ANN001
    def step(request) -> str:  # noqa: ANN001
        prompt = "\n".join(m["content"] for m in request.messages)  # the steps so far are turns
        candidate = re.search(r"Candidate (\d) of", prompt).group(1)
        if "Thought 1: path B" in prompt:
            return f"Thought: B{candidate} done.\nAction: Finish[answer B{candidate}]"
        return f"Thought: path {'AB'[int(candidate) - 1]}.\nAction: RetrieveNode[Aiko]"

    def score(request) -> str:  # noqa: ANN001
        chain = request.messages[-1]["content"]
        return "0.9" if "B2" in chain else "0.7" if "path B" in chain else "0.1"

    backend = ScriptedBackend(rules=[(SCORE, score), (AGENT, step)])
    answer = await kg(backend).aask("q?", "kgr", strategy="tot", k=2, t=1, steps=3, evaluator="score", repair=False)
    assert answer.text == "answer B2" and answer.stats["outcome"] == "finished"
    assert calls(backend, AGENT) == 4 and calls(backend, SCORE) == 4  # depth 2 ends: the kept state finished
    evaluations = [s for s in answer.trace if s.agent == "evaluator"]
    assert all(s.action == "score" for s in evaluations) and len(evaluations) == 2
    assert sorted(evaluations[0].outputs["scores"].values()) == [0.1, 0.7]


async def test_select_evaluator_follows_the_models_choice(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(SELECT, "Choice 3 looks best. The best choice is 3"),
                                     (AGENT, unique_steps())])
    answer = await kg(backend).aask("q?", "kgr", strategy="tot", k=3, t=1, steps=2, finish_at_limit=False)
    depth_two = [r.messages[-1]["content"] for r in backend.requests if AGENT in r.messages[-1]["content"]][3:]
    assert all("Thought 1: idea 3." in p for p in depth_two)
    ranking = next(s for s in answer.trace if s.agent == "evaluator").outputs["ranking"]
    assert ranking[0] == 3  # state ids 1..3 at depth 1


async def test_unparseable_selection_keeps_generation_order_and_is_counted(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(SELECT, "hmm"), (AGENT, unique_steps())])
    answer = await kg(backend).aask("q?", "kgr", strategy="tot", k=2, t=1, steps=2, finish_at_limit=False)
    assert answer.stats["parse_failures"] == 2


async def test_global_retention_is_linear_in_depth_and_the_default(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 2, 1"), (AGENT, unique_steps())])
    await kg(backend).aask("q?", "kgr", strategy="tot", k=3, t=2, steps=3, finish_at_limit=False, repair=False)
    assert calls(backend, AGENT) == 3 + 2 * 3 + 2 * 3 and calls(backend, SELECT) == 3
    # the paper's defaults (n = 10, k = t = 3): k + (n - 1) k t generations and n selections
    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 1, 2, 3"), (AGENT, unique_steps())])
    answer = await kg(backend).aask("another q?", "kgr", strategy="tot", finish_at_limit=False,  # (a new question)
                                    repair=False)
    assert calls(backend, AGENT) == 3 + 9 * 9 and calls(backend, SELECT) == 10
    assert answer.stats["outcome"] == "reached_limit" and "budget_reached" not in answer.stats


async def test_got_merges_pairs_with_both_parents(kg) -> None:  # noqa: ANN001
    merged = itertools.count(1)
    backend = ScriptedBackend(rules=[(SELECT, "The best choices are: 1, 2"),
                                     (MERGE, lambda r: f"Thought: merged {next(merged)}.\nAction: RetrieveNode[x]"),
                                     (AGENT, unique_steps())])
    answer = await kg(backend).aask("q?", "kgr", strategy="got", k=2, t=2, steps=3, retain="per_parent",
                                    finish_at_limit=False, repair=False)
    # merges at depth i: floor(k t^(i-1) / 2) -> 1 + 2 + 4
    assert calls(backend, MERGE) == 7 and answer.stats["merges"] == 7
    assert calls(backend, AGENT) == 14 and calls(backend, SELECT) == 7
    merges = [s for s in answer.trace if s.action == "merge"]
    assert len(merges) == 7 and all(len(s.inputs["parents"]) == 2 for s in merges)
    first = backend.requests[[i for i, r in enumerate(backend.requests) if MERGE in r.messages[-1]["content"]][0]]
    assert "Chain 1:\nThought 1: idea" in first.messages[-1]["content"] and "Chain 2:" in first.messages[-1]["content"]


def explore_rules(end: str = "[Yes]", relations: str = "[author]",
                  neighbours: str = "[Maria Lindqvist, Tomasz Nowak]") -> list:
    return [("List the entities in the text", "Entities: [Graph reasoning with language models]"),
            ("attributes of this entity", "[year]"),
            ("relations of this entity", relations),
            ("reached from the entity through the relation", neighbours),
            (END, end)]


async def test_cot_explore_prunes_relations_then_neighbours(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["I need the authors of the graph reasoning paper.",
                                      "Finish[Maria Lindqvist, Tomasz Nowak]"], rules=explore_rules())
    answer = await kg(backend).aask("Who wrote the graph reasoning paper?", "kgr", interaction="explore")
    assert answer.text == "Maria Lindqvist, Tomasz Nowak" and answer.stats["steps"] == 2
    assert answer.evidence.path_texts == ["Graph reasoning with language models -> author -> Maria Lindqvist",
                                          "Graph reasoning with language models -> author -> Tomasz Nowak"]
    relations = next(r.messages[-1]["content"] for r in backend.requests if "relations of this entity" in
                     r.messages[-1]["content"])
    assert "Relations: author, venue, reference" in relations
    second_thought = [r for r in backend.requests if THOUGHT in r.messages[-1]["content"]][1].messages[-1]["content"]
    assert "Graph reasoning with language models -> author -> Tomasz Nowak" in second_thought
    assert "Graph reasoning with language models: year = 2023" in second_thought
    assert calls(backend, END) == 1  # [Yes] after depth 1 stops the search


async def test_explore_searches_deeper_until_end_check_says_yes(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["Look at the graph reasoning paper.", "Finish[done]"],
                              rules=explore_rules(end="[No] not yet", relations="[author, paper]",
                                                  neighbours="[Tomasz Nowak, Random walks on citation networks]"))
    answer = await kg(backend).aask("q?", "kgr", interaction="explore", search_depth=2)
    assert calls(backend, END) == 2
    # depth 2 visits the author found at depth 1 (relation paper), reaching p2
    assert calls(backend, "relations of this entity") == 2 and answer.text == "done"
    assert "Tomasz Nowak -> paper -> Random walks on citation networks" in answer.evidence.path_texts


@pytest.mark.parametrize("strategy", ["tot", "got"])
async def test_tree_strategies_with_explore(kg, strategy: str) -> None:  # noqa: ANN001
    thoughts = itertools.count(1)

    def think(request) -> str:  # noqa: ANN001
        return "Finish[Tomasz Nowak]" if "Previous thoughts:\n(none)" not in request.messages[-1]["content"] \
            else f"Thought about the paper {next(thoughts)}."

    backend = ScriptedBackend(rules=[(SCORE, "0.5"), (MERGE, "Finish[Tomasz Nowak]"), *explore_rules(),
                                     (THOUGHT, think)])
    answer = await kg(backend).aask("q?", "kgr", strategy=strategy, interaction="explore", k=2, t=1,
                                    evaluator="score")
    assert answer.text == "Tomasz Nowak" and answer.stats["outcome"] == "finished"
    if strategy == "got":
        assert answer.stats["merges"] == 1


async def test_kg_baselines_show_nodes_and_neighbours(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[("knowledge-graph nodes below", "Maria Lindqvist")])
    tg = kg(backend)
    text = await tg.aask("Maria Lindqvist", "kg-textrag", top_k=1)
    graph = await tg.aask("Maria Lindqvist", "kg-graphrag", top_k=1)
    assert text.text == graph.text == "Maria Lindqvist" and text.evidence.nodes[0].id == "a1"
    prompts = [r.messages[-1]["content"] for r in backend.requests]
    assert '"organization": "Uppsala University"' in prompts[0] and "paper: Graph reasoning" not in prompts[0]
    assert "  paper: Graph reasoning with language models" in prompts[1]


async def test_kgr_on_a_corpus_built_index_cites_passages(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge()
    entity = next(tg.store.iter_nodes("entity"))
    passage_of = next(e.src for e in tg.store.iter_edges(["CONTAINS"]) if e.dst == entity.id)
    backend = ScriptedBackend(script=[f"Thought: find it.\nAction: RetrieveNode[{entity.text}]",
                                      f"Thought: where is it said?\nAction: NeighborCheck[{entity.id}, mentioned_in]",
                                      f"Thought: read.\nAction: NodeFeature[{passage_of}, text]",
                                      "Thought: ok.\nAction: Finish[yes]"], rules=[(READ, read_own_answer)])
    tg = open_bridge(backend)
    answer = await tg.aask("q?", "kgr")
    assert answer.text == "yes"
    # the one reader (the default since issue 47) read the passages behind the chain's nodes, the one the
    # chain read first, and cited it
    assert [c.chunk_id for c in answer.citations] == [passage_of] and answer.stats["reader"] == "shared"
    read = next(s for s in answer.trace if s.action == "kgr.read")
    assert read.inputs["passages"][0] == passage_of and read.inputs["finished"] is True
    assert Path(f"{tg.store.path}.kg").is_dir()  # built once, reused while the index is unchanged


@pytest.mark.parametrize("linking, by", [("shared", "name"), ("vector", "vector")])
async def test_explore_links_names_to_the_indexs_entities_first(open_bridge, linking: str, by: str) -> None:  # noqa: ANN001
    """On a corpus-built index an extracted name is linked to the entity of that name (the shared
    linker, as ppr links question entities); the vector search over node texts is the fallback."""
    backend = ScriptedBackend(script=["Alice Stone founded a company.", "Finish[Acme Corp]"],
                              rules=[("List the entities in the text", "Entities: [Alice Stone]"),
                                  ("attributes of this entity", "[name]"), ("relations of this entity", "[founded]"),
                                  ("reached from the entity through the relation", "[Acme Corp]"), (END, "[Yes]"),
                                  (READ, read_own_answer)])
    tg = open_bridge(backend)
    answer = await tg.aask("Which company did Alice Stone found?", "kgr", interaction="explore",
                           entity_linking=linking)
    link = next(s for s in answer.trace if s.action == "link")
    alice = next(n.id for n in tg.store.iter_nodes("entity") if n.text == "Alice Stone")
    assert link.outputs["by"] == [by] and (linking == "vector" or link.outputs["nodes"] == [alice])
    assert answer.text == "Acme Corp"


async def test_kgr_needs_an_llm_and_a_graph(kg, tmp_path: Path) -> None:  # noqa: ANN001
    from thinkgraph.errors import ConfigError

    with ThinkGraph(tmp_path / "empty.db", settings=Settings(), embedder=HashEmbedder(), create=True,
                    backend=ScriptedBackend()) as empty, pytest.raises(ConfigError, match="no graph for kgr"):
        await empty.aask("q?", "kgr")
    with ThinkGraph(tmp_path / "x.db", settings=Settings(), embedder=HashEmbedder(), create=True) as no_llm, \
            pytest.raises(ConfigError, match="needs an LLM endpoint"):
        await no_llm.aask("q?", "kgr")
    with pytest.raises(ConfigError, match="kgr option strategy"):
        await kg(ScriptedBackend()).aask("q?", "kgr", strategy="bfs")


async def test_error_taxonomy_of_wrong_answers(kg, tmp_path: Path) -> None:  # noqa: ANN001
    import json

    from thinkgraph.eval.datasets import load_questions
    from thinkgraph.eval.runner import EvalRunner, MethodSpec
    from thinkgraph.eval.taxonomy import FOUND_NOT_RETURNED, REACHED_LIMIT, mechanical_error

    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in [
        {"id": "found", "question": "Where does Tomasz Nowak work?", "answer": "Warsaw Institute"},
        {"id": "limit", "question": "Who is Aiko?", "answer": "Aiko Tanaka"},
        {"id": "wrong", "question": "Which venue?", "answer": "Journal of Network Science"},
        {"id": "right", "question": "Maria's paper?", "answer": "Graph reasoning with language models"}]))

    def step(request) -> str:  # noqa: ANN001
        prompt = request.messages[-1]["content"].split("Question: ")[-1]  # after the examples' questions
        if "Tomasz" in prompt:
            return ("Thought: look.\nAction: Finish[Uppsala University]" if "Observation 1" in prompt
                    else "Thought: look.\nAction: NodeFeature[a2, organization]")
        if "Aiko" in prompt:
            return "Thought: hmm.\nAction: RetrieveNode[someone]"
        if "Which venue" in prompt:
            return "Thought: guess.\nAction: Finish[Conference on Graph Learning]"
        return "Thought: known.\nAction: Finish[Graph reasoning with language models]"

    backend = ScriptedBackend(rules=[("illogical or wrong reasoning step", '{"wrong_step": true}'),
                                     ("Decide whether the predicted answer", lambda r: json.dumps(
                                         {"correct": "Prediction: Graph reasoning" in r.messages[-1]["content"]
                                          or "Predicted answer: Graph reasoning" in r.messages[-1]["content"]})),
                                     ("search of a knowledge graph for the answer", "Answer: Aiko Sato"),  # the limit
                                     (AGENT, step)])
    tg = kg(backend)
    paper = MethodSpec.parse("kgr:steps=2,finish_at_limit=false,repair=false")  # the paper's form
    runner = EvalRunner(tg, [paper], tmp_path / "out", judge=True)
    (row,) = await runner.run(load_questions(questions))
    records = {r["qid"]: r for r in map(json.loads, (tmp_path / "out" / "records.jsonl").read_text().splitlines())}
    assert {q: r["stats"]["error_type"] for q, r in records.items()} == {
        "found": FOUND_NOT_RETURNED, "limit": REACHED_LIMIT, "wrong": "wrong_reasoning", "right": "correct"}
    assert row["stats"]["error_type"] == {"answer_found_not_returned": 1, "correct": 1, "reached_limit": 1,
                                          "wrong_reasoning": 1}
    # without a judge the third category is not claimed
    answer = await tg.aask("Which venue?", "kgr", steps=2, finish_at_limit=False, repair=False)
    assert mechanical_error(answer, ["Journal of Network Science"]) is None
    # the default answers at the step limit: a wrong answer given there is one the limit cut short
    at_limit = await tg.aask("Who is Aiko?", "kgr", steps=2, repair=False)
    assert at_limit.stats["outcome"] == "finished_at_limit"
    assert mechanical_error(at_limit, ["Somebody Else"]) == REACHED_LIMIT


def test_explore_reads_the_last_finish_that_names_an_answer() -> None:
    from thinkgraph.methods.kgr.explore import finish_answer

    quoted = ('I will write "Finish[answer]" to say I am done.\nTherefore the next thought is:\n'
              "Finish[Christopher Nolan and Sathish Kalathil]")
    assert finish_answer(quoted) == "Christopher Nolan and Sathish Kalathil"  # not 'answer]" to say ... Finish[...'
    assert finish_answer("I am done: Finish[answer]") is None  # the format's placeholder alone: not finished
    assert finish_answer("Finish[1867 [2]]") == "1867 [2]" and finish_answer("Look at the paper.") is None


async def test_an_explore_thought_that_quotes_the_placeholder_explores_on(kg) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=["I need the authors, then I write Finish[answer].",
                                      "Finish[Maria Lindqvist, Tomasz Nowak]"], rules=explore_rules())
    answer = await kg(backend).aask("Who wrote the graph reasoning paper?", "kgr", interaction="explore")
    assert answer.text == "Maria Lindqvist, Tomasz Nowak" and answer.stats["steps"] == 2
    assert calls(backend, "relations of this entity") >= 1  # the first thought explored the graph
