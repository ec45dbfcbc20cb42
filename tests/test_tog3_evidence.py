"""ToG-3 with a scripted model that reads its prompts: it answers only what the context shows, judges
sufficiency from the facts present and asks for what is missing, with the preambles, trailing prose
and notes real models add. These tests prove that MACER reaches the bridge evidence of a multi-hop
question, answers each sub-query on its own subgraph, hands H_k to the Responser and synthesises
the final answer from the whole trajectory's evidence."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.run import run_method
from thinkgraph.methods.tog3 import ToG3Config, ToG3Method
from thinkgraph.methods.tog3.agents import Retriever
from thinkgraph.methods.tog3.loop import parse_sub_query
from thinkgraph.testing import ScriptedBackend

QUESTION = "In which valley lies the town where the company founded by Alice Stone is based?"
FOUNDED, BASED, VALLEY = "Alice Stone founded Acme Corp", "Acme Corp is based in Rivertown", "Rivertown lies in"
FACTS = {FOUNDED: ("Alice Stone -> founded -> Acme Corp",), BASED: ("Acme Corp -> based in -> Rivertown",),
         VALLEY: ("Rivertown -> lies in -> Greenland Valley",)}


def knows(context: str, fact: str) -> bool:
    return fact in context or any(t in context for t in FACTS[fact])


class Reader:
    """A model that reacts to what its prompts contain (and records them)."""

    def __init__(self) -> None:
        self.prompts: dict[str, list[str]] = {}
        self.backend = ScriptedBackend(rules=[
            ("Give up to", self._on("keywords", lambda p: "Sure! KEYWORDS: " + "^".join(
                re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", p.split("Query:")[-1])))),
            ("Judge whether the context", self._on("reflect", self.reflect)),
            ("Write the next question", self._on("evolve", self.evolve)),
            ("Refine it:", self._on("refine", self.refine)),
            # the final answer: the one reader (the default), or the paper's FINAL (reader="paper")
            ("Answer the question using only the numbered passages below", self._on("final", self.final)),
            ("reasoning trajectory and the evidence", self._on("final", self.final)),
            ("Answer the query using only the context", self._on("respond", self.respond))])

    def _on(self, kind: str, handler):  # noqa: ANN001, ANN202
        def reply(request: ChatRequest) -> str:
            prompt = request.messages[0]["content"]
            self.prompts.setdefault(kind, []).append(prompt)
            return handler(prompt)
        return reply

    @staticmethod
    def respond(prompt: str) -> str:
        # the layout: the context (and H_k in the instruction) first, the query last
        context, query = prompt.rsplit("\n\nQuestion: ", 1)
        if "Alice Stone found" in query and knows(context, FOUNDED):
            return "Based on the context, the answer is Acme Corp."
        if "Acme Corp based" in query and knows(context, BASED):
            return "Rivertown. (The context says Acme Corp is based there.)"
        if "valley" in query and all(knows(context, f) for f in FACTS):
            return "Greenland Valley"
        return "Unknown"

    @staticmethod
    def reflect(prompt: str) -> str:
        enough = all(knows(prompt, f) for f in FACTS)
        return json.dumps({"reason": "all three links" if enough else "a link is missing",
                           "verdict": "yes" if enough else "no"}) \
            + "\nI hope this helps! Let me know if you need anything else."

    @staticmethod
    def evolve(prompt: str) -> str:
        context = prompt.rsplit("\n\nQuestion: " + QUESTION, 1)[0]  # the context and H_k, before the question
        if not knows(context, FOUNDED):
            return "Sure! Here is the next question:\nNext question: Which company did Alice Stone found?\n" \
                   "This isolates the first hop."
        if not knows(context, BASED):
            return "Next question: Where is Acme Corp based?"
        if not knows(context, VALLEY):
            return "**Next question:** In which valley does Rivertown lie?"
        return "None"

    @staticmethod
    def refine(prompt: str) -> str:
        triples = prompt.split("Sub-graph:\n", 1)[1]
        return f"Here is the refined sub-graph:\n{triples}\n(Note: nothing needed removing.)"

    @staticmethod
    def final(prompt: str) -> str:
        numbers = {fact: re.search(r"\[(\d+)\] [^\n]*" + re.escape(fact), prompt) for fact in (BASED, VALLEY)}
        if all(numbers.values()):
            return f"Greenland Valley [{numbers[BASED].group(1)}][{numbers[VALLEY].group(1)}]"
        return "Unknown"


@pytest.fixture
def bridge(open_bridge):  # noqa: ANN001, ANN201
    return open_bridge


def tog3(tg: ThinkGraph, **options: object) -> ToG3Method:
    """ToG-3 on the index; its final reader reads its subgraphs' passages alone unless asked (these tests
    pin what the evolution reaches; the walk's fill is test_tog3_fill.py's)."""
    options.setdefault("reader_fill", "none")
    return ToG3Method(MethodContext(tg.store, tg.view, tg.settings, tg.llm), ToG3Config(**options))


async def test_evolution_reaches_the_bridge_passage_and_the_final_answer_cites_it(bridge) -> None:  # noqa: ANN001
    reader = Reader()
    tg = bridge(reader.backend)
    # one passage per subgraph: the question's own retrieval finds only the valley passage (the
    # paper's vector retrieval: the shared walk reaches the bridge at once, test_tog3_retrieval.py)
    answer = await run_method(tog3(tg, top_k=1, context_passages=1, retrieval="paper"), QUESTION)
    assert answer.text == "Greenland Valley" and answer.status == "answered"
    assert answer.stats["outcome"] == "sufficient" and answer.stats["evolutions"] == 2
    assert "2 evolution(s) of the query and subgraph: the Reflector judged the evidence sufficient" in answer.message
    # (the question's own retrieval, with the model's keywords, reaches the first hop's passage)
    assert [s.inputs["query"] for s in answer.trace if s.action == "retrieve"] == [
        QUESTION, "Where is Acme Corp based?", "In which valley does Rivertown lie?"]
    # each sub-query was answered on its own evolved subgraph ...
    subs = [(s.inputs["query"], s.outputs["answer"]) for s in answer.trace if s.action == "respond"
            and s.inputs["sub_query"]]
    assert subs == [("Where is Acme Corp based?", "Rivertown. (The context says Acme Corp is based there.)"),
                    ("In which valley does Rivertown lie?", "Greenland Valley")]
    # ... and the Reflector and the Responser see H_k as those pairs, not the answers to the question
    second_evolve = reader.prompts["evolve"][1]
    assert "- Where is Acme Corp based? -> Rivertown. (The context says" in second_evolve
    last_respond = reader.prompts["respond"][-1]
    assert "Reasoning so far (sub-question -> answer):" in last_respond
    assert "- In which valley does Rivertown lie? -> Greenland Valley" in last_respond
    # the final answer sees every subgraph's passages, not only the last one, and cites the bridge
    final = reader.prompts["final"][0]
    assert all(fact in final for fact in (FOUNDED, BASED, VALLEY))
    assert {c.doc_id for c in answer.citations} == {"c2", "c3"}
    assert "c2" in {n.props.get("doc_id") for n in answer.evidence.nodes if n.type == "chunk"}


async def test_without_evolution_the_bridge_is_never_reached(bridge) -> None:  # noqa: ANN001
    reader = Reader()
    tg = bridge(reader.backend)
    answer = await run_method(tog3(tg, top_k=1, context_passages=1, evolve_query=False, retrieval="paper"), QUESTION)
    assert answer.text == "Unknown" and answer.status == "abstained"
    assert BASED not in reader.prompts["final"][0] and answer.stats["outcome"] == "horizon"


async def test_call_budget_stops_the_loop_and_the_answer_says_so(bridge) -> None:  # noqa: ANN001
    reader = Reader()
    tg = bridge(reader.backend)
    answer = await run_method(tog3(tg, top_k=1, context_passages=1, max_calls=5), QUESTION)
    assert answer.stats["outcome"] == "budget_reached" and "call budget (max_calls=5)" in answer.message
    method_steps = [s for s in answer.trace if s.agent != "llm"]  # (the envelope's endpoint step comes last)
    # one call kept for the synthesis (the one reader's step)
    assert answer.cost.calls == 5 and method_steps[-1].action == "tog3.final"
    assert answer.status == "abstained"  # the trajectory so far does not determine the answer


@pytest.fixture
def no_triplets(tmp_path: Path):  # noqa: ANN201
    """An index built without a model: chunks and co-occurring entities, no triplets."""
    path = tmp_path / "nolm.db"
    with ThinkGraph(path, settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"])
    return path


@pytest.mark.parametrize(("write", "read_only"), [(True, False), (False, False), (True, True)])
async def test_on_the_fly_extraction_is_reported_and_its_write_back_is_a_switch(no_triplets: Path, write: bool,
                                                                               read_only: bool) -> None:
    def extract(request: ChatRequest) -> str:
        text = request.messages[0]["content"].split("## Text", 1)[1]
        if "based in Rivertown" not in text:
            return '{"entities": [], "relationships": []} -- nothing relevant here'
        return "Here you go:\n" + json.dumps({"entities": [{"entity_name": "Acme Corp", "entity_type": "Org"},
                                                           {"entity_name": "Rivertown", "entity_type": "Place"}],
                                              "relationships": [{"source_entity": "Acme Corp",
                                                                 "target_entity": "Rivertown",
                                                                 "relation": "based in"}]})

    reader = Reader()
    reader.backend.rules.insert(0, ("build a small knowledge graph", extract))
    with ThinkGraph.open(no_triplets, settings=Settings(), embedder=HashEmbedder(), backend=reader.backend) as tg:
        assert not tg.store.count_nodes().get("triplet")
        tg.store.read_only = read_only  # (as a file this user may not write opens)
        answer = await tg.aask(QUESTION, method="tog3", horizon=1, write_triplets=write, top_k=1,
                               context_passages=1, retrieval="paper")  # (its sub-query reaches the bridge)
        written = write and not read_only
        extracted = [s for s in answer.trace if s.action == "extract"]
        assert extracted and all(s.outputs["written_to_index"] is written for s in extracted)
        assert answer.stats["extracted_triplets"] == 1
        expected = "wrote them to the index" if written else \
            "for this question only (the index is read-only)" if read_only else "for this question only"
        assert expected in answer.message
        assert bool(tg.store.count_nodes().get("triplet")) is written
        assert tg.stats()["stages_outdated"] is written
        again = await tg.aretrieve(QUESTION, method="ppr")  # the index still answers, every method
        assert again.citations and not tg.stats()["missing_stages"]
        if written:  # the next indexing run brings the new nodes into the derived stages
            tg.settings.index.summarize_communities = False
            tg.settings.index.document_summaries = "first_sentences"
            assert tg.index([]).rebuilt_stages == ["vectors", "synonyms", "communities"]
            assert not tg.stats()["stages_outdated"]


async def test_communities_lead_to_their_members_triplets(bridge) -> None:  # noqa: ANN001
    tg = bridge(None)
    community = next(tg.store.iter_nodes("community"))
    members = {e.dst for e in tg.store.edges_of(community.id, "SUMMARY_FOR")}
    retriever = Retriever(tg.view, ToG3Config(), None)
    graph = retriever._expand([(1.0, "community", community.id)])
    names = {n.text for n in tg.store.get_nodes(sorted(members))}
    assert graph.communities == [community.id] and graph.triples
    assert all(s in names and o in names for s, _, o in graph.triples)
    related = {(e.src, e.dst) for m in members for e in tg.store.edges_of(m, "OPENREL")
               if e.src in members and e.dst in members}
    assert len(graph.triples) == len(related)


def test_sub_query_parsing_tolerates_preambles() -> None:
    assert parse_sub_query("Sure!\nNext question: Who founded Acme?\nThat is the gap.") == "Who founded Acme?"
    assert parse_sub_query("Let me think.\nWho founded Acme?") == "Who founded Acme?"
    assert parse_sub_query("None.") is None and parse_sub_query("") is None
    assert parse_sub_query("**Next question:** None") is None


async def test_an_eval_of_tog3_then_ppr_gives_ppr_the_result_of_ppr_alone(no_triplets: Path, tmp_path: Path) -> None:
    """ToG-3's triplets extracted on the fly stay with their question by default (Eq. 4), and eval never
    lets one write back: no question or method after it reads a changed index."""
    from thinkgraph.errors import ConfigError
    from thinkgraph.eval.datasets import Question
    from thinkgraph.eval.runner import EvalRunner, MethodSpec

    def extract(request: ChatRequest) -> str:
        return json.dumps({"entities": [{"entity_name": "Acme Corp", "entity_type": "Org"},
                                        {"entity_name": "Rivertown", "entity_type": "Place"}],
                           "relationships": [{"source_entity": "Acme Corp", "target_entity": "Rivertown",
                                              "relation": "based in"}]})

    reader = Reader()
    reader.backend.rules[:0] = [("build a small knowledge graph", extract),
                                ("numbered passages below", lambda request: "Greenland Valley [1]")]
    questions = [Question(id="q1", question=QUESTION, answers=("Greenland Valley",), supporting_ids=("c1", "c2"))]
    with ThinkGraph.open(no_triplets, settings=Settings(), embedder=HashEmbedder(), backend=reader.backend) as tg:
        with pytest.raises(ConfigError, match="write_triplets=True would let one question change the index"):
            EvalRunner(tg, [MethodSpec.parse("tog3:write_triplets=true")], tmp_path / "no")
        (alone,) = await EvalRunner(tg, [MethodSpec.parse("ppr")], tmp_path / "alone").run(questions)
        rows = await EvalRunner(tg, [MethodSpec.parse("tog3:horizon=1,top_k=1,context_passages=1,retrieval=paper"),
                                     MethodSpec.parse("ppr")], tmp_path / "both").run(questions)
        assert rows[0]["stats"]["extracted_triplets"]["mean"] >= 1  # tog3 did extract, for its question only
        assert not tg.store.count_nodes().get("triplet")
    records = [json.loads(x) for x in (tmp_path / "both" / "records.jsonl").read_text().splitlines()]
    after = next(r for r in records if r["label"] == "ppr")
    before = json.loads((tmp_path / "alone" / "records.jsonl").read_text().splitlines()[0])
    assert after["retrieved"] == before["retrieved"] and after["metrics"] == before["metrics"]


async def test_the_reflectors_sub_query_decides_what_is_cited(bridge) -> None:  # noqa: ANN001
    """Two Reflectors that ask for different sub-queries make different evolved subgraphs, and the
    final answer cites the passages of the subgraphs it was shown: the model's decision reaches the
    citations (issue #39)."""
    def final(request: ChatRequest) -> str:
        shown = re.findall(r"^\[(\d+)\]", request.messages[0]["content"], flags=re.MULTILINE)
        return "Answer: Greenland Valley " + "".join(f"[{n}]" for n in shown)

    cited = {}
    for seed, sub_query in enumerate(("Who works at Acme Corp as an engineer?", "Who was born in Rivertown?")):
        backend = ScriptedBackend(rules=[
            ("Give up to", lambda r: "KEYWORDS: " + "^".join(re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*",
                                                                        r.messages[0]["content"].split("Query:")[-1]))),
            ("Judge whether the context", '{"reason": "more", "verdict": "no"}'),
            ("Write the next question", f"Next question: {sub_query}"),
            ("Refine it:", lambda r: r.messages[0]["content"].split("Sub-graph:\n", 1)[1]),
            ("Answer the question using only the numbered passages below", final),  # the one reader
            ("Answer the query using only the context", "Unknown")])
        tg = bridge(backend)
        tg.llm.settings.seed = seed  # each Reflector is asked: the LLM cache does not answer for the other
        answer = await run_method(tog3(tg, horizon=1, top_k=3, context_passages=3,
                                       retrieval="paper"), QUESTION)
        cited[sub_query] = {c.quote for c in answer.citations}
    engineer, born = cited.values()
    assert engineer != born  # the sub-query's evolved subgraph is cited only after its own evolution
    assert any("Carol Diaz" in q for q in born) and not any("Carol Diaz" in q for q in engineer)


async def test_the_agents_read_passages_first_so_that_a_round_keeping_them_shares_its_prefix(bridge) -> None:  # noqa: ANN001
    """The context an agent reads: passages, then community summaries, then facts. Two rounds whose
    subgraphs keep the same passages and differ in their (refined) triples differ only after the passages,
    so a server's prompt cache reads them once."""
    from thinkgraph.methods.tog3.subgraph import Subgraph

    tg = bridge(Reader().backend)
    retriever = Retriever(tg.view, ToG3Config(), None)
    chunks = [n.id for n in tg.store.iter_nodes("chunk")][:2]
    first = retriever.context(Subgraph(passages=chunks, triples=[("Alice Stone", "founded", "Acme Corp")]))
    second = retriever.context(Subgraph(passages=chunks, triples=[("Acme Corp", "based in", "Rivertown")]))
    assert len(chunks) == 2 and first.startswith("Passage 1: ") and "\n\nPassage 2: " in first
    passages, facts = first.split("\n\nFacts:\n")
    assert facts == "Alice Stone -> founded -> Acme Corp" and "Passage 2: " in passages
    assert second.startswith(passages + "\n\nFacts:\n") and second != first


async def test_a_passage_whose_extraction_failed_is_not_asked_again_in_a_later_round(no_triplets: Path) -> None:
    asked: list[str] = []

    def extract(request: ChatRequest) -> str:
        asked.append(request.messages[0]["content"].split("## Text", 1)[1])
        return "garbage"  # every attempt unusable: the extraction fails

    reader = Reader()
    reader.backend.rules.insert(0, ("build a small knowledge graph", extract))
    with ThinkGraph.open(no_triplets, settings=Settings(), embedder=HashEmbedder(), backend=reader.backend) as tg:
        answer = await tg.aask(QUESTION, method="tog3", horizon=3, top_k=1, context_passages=1, retrieval="paper",
                               abstention_is_insufficient=True)
    failed = [s for s in answer.trace if s.action == "extract.failed"]
    rounds = [s for s in answer.trace if s.action == "retrieve"]
    assert len(rounds) >= 2 and failed  # later rounds reached passages whose extraction had failed
    assert len({s.inputs["chunk"] for s in failed}) == len(failed)  # each asked in one round only
    assert len(asked) == len(set(asked)) * 3  # (its attempts: the first reply and two repairs)
    assert "triplet extraction failed on" in answer.message
