"""ToPG Naive and Local modes (Alg. 1) with the scripted LLM."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.llm.limits import MAX_ITEMS_PER_REPLY
from thinkgraph.methods.topg.prompts import SELECT
from thinkgraph.testing import ScriptedBackend

# "eval": the stop judgement (EVAL_STOP, reader="shared", the default) or the paper's Eval (reader="paper");
# "read": the one reader, which answers after the stop judgement
NEEDLES = {"select": "Keep only the facts", "eval": "Can the question be answered",
           "nextq": "targeted sub-questions", "naive": "using only the numbered facts",
           "read": "Answer the question using only the numbered passages below"}


def facts_in(request: ChatRequest) -> list[str]:
    text = request.messages[0]["content"].split("Facts", 1)[1]
    return [line.split("] ", 1)[1] for line in text.splitlines() if line.startswith("[")]


class Script:
    def __init__(self, **handlers) -> None:  # noqa: ANN003
        self.calls: list[str] = []
        self.backend = ScriptedBackend(rules=[(needle, self._wrap(kind, handlers.get(kind)))
                                              for kind, needle in NEEDLES.items()])

    def _wrap(self, kind: str, handler):  # noqa: ANN001, ANN202
        def reply(request: ChatRequest) -> str:
            self.calls.append(kind)
            if handler is None:
                raise AssertionError(f"unexpected {kind} call")
            return handler(request)
        return reply


def stop(answerable: bool) -> str:
    """Eval as a stop judgement: the reason first, the verdict last."""
    return json.dumps({"reason": "the facts name it" if answerable else "a hop is missing",
                       "verdict": "yes" if answerable else "no"})


def read_citing(fact: str, answer: str):  # noqa: ANN201
    """The reader: the answer citing the passage that states ``fact``, "Unknown" when none is shown."""
    def handler(request: ChatRequest) -> str:
        found = re.search(r"^\[(\d+)\] [^\n]*" + re.escape(fact), request.messages[0]["content"], re.MULTILINE)
        return f"Answer: {answer} [{found.group(1)}]" if found else "Answer: Unknown"
    return handler


def keeping(numbers: list[int]) -> str:
    """Select's reply: the reason first, then the numbers kept."""
    return json.dumps({"reason": "these facts name what the question asks about", "keep": numbers})


def keep_all(request: ChatRequest) -> str:
    return keeping(list(range(1, len(facts_in(request)) + 1)))


def keep_matching(*words: str):  # noqa: ANN201
    """Select: keep the facts that contain any of the words."""
    def handler(request: ChatRequest) -> str:
        facts = facts_in(request)
        return keeping([i for i, f in enumerate(facts, 1) if any(w in f for w in words)])
    return handler


def schema_of(request: ChatRequest) -> dict:
    """The JSON schema a request asks the server for, in whichever dialect it was sent."""
    form = request.response_format or {}
    return form.get("schema") or form["json_schema"]["schema"]


@pytest.fixture
def open_tg(open_bridge):  # noqa: ANN001, ANN201
    return lambda script: open_bridge(script.backend if script else None)


async def test_naive_mode_answers_from_suggested_propositions(open_tg) -> None:  # noqa: ANN001
    def naive(request: ChatRequest) -> str:
        facts = facts_in(request)
        return f"Acme Corp [{facts.index('Alice Stone founded Acme Corp') + 1}]"

    script = Script(naive=naive)
    tg = open_tg(script)
    answer = await tg.aask("What did Alice Stone found?", method="topg", mode="naive", k=5)
    assert answer.text == "Acme Corp" and answer.status == "answered" and script.calls == ["naive"]
    assert [c.doc_id for c in answer.citations] == ["c1"]


@pytest.mark.parametrize("reader", ["shared", "paper"])
async def test_local_answers_after_first_iteration(open_tg, reader: str) -> None:  # noqa: ANN001
    """reader="paper": Eval's JSON verdict carries the answer. The default (issue 47): Eval is a yes/no
    stop judgement and the one reader answers from the passages of the collected facts, citing them."""
    paper = reader == "paper"
    script = Script(select=keep_matching("Alice", "Acme"),
                    eval=lambda r: json.dumps({"answerable": True, "answer": "Rivertown", "facts": [1, 2]})
                    if paper else stop(True), read=read_citing("Acme Corp is based in Rivertown", "Rivertown"))
    tg = open_tg(script)
    answer = await tg.aask("Where is the company founded by Alice Stone based?", method="topg", k=5, reader=reader)
    assert answer.status == "answered" and answer.text == "Rivertown"
    assert script.calls == ["select", "select", "eval"] + ([] if paper else ["read"])
    actions = [s.action for s in answer.trace]
    read = [] if paper else ["rank_collected", "topg.answer"]
    assert actions == ["select", "suggest.local", "select", "eval"] + read + ["endpoint"]
    assert answer.citations and answer.cost.calls == (3 if paper else 4)
    assert ("reader_order=walk" in answer.stats["variant"]) is not paper  # which order the reader read in
    if not paper:  # the reader cites the passage it read the answer from
        assert [c.doc_id for c in answer.citations] == ["c2"]
        assert next(s for s in answer.trace if s.action == "eval").outputs["verdict"] == "yes"


async def test_local_asks_next_questions_then_answers(open_tg) -> None:  # noqa: ANN001
    evals = iter([False, True])
    script = Script(select=keep_all, eval=lambda r: stop(next(evals)),
                    nextq=lambda r: json.dumps({"questions": ["Where does Rivertown lie?", "Who founded Acme?"]}),
                    read=read_citing("Greenland Valley", "Greenland Valley"))
    tg = open_tg(script)
    answer = await tg.aask("In which valley is Acme Corp's town?", method="topg", k=2)
    assert answer.text == "Greenland Valley"
    assert script.calls.count("nextq") == 1 and script.calls.count("eval") == 2 and script.calls[-1] == "read"
    local_queries = [s.inputs["query"] for s in answer.trace if s.action == "suggest.local"]
    assert local_queries[1:] == ["Where does Rivertown lie?", "Who founded Acme?"]


@pytest.mark.parametrize("reader", ["shared", "paper"])
async def test_local_gives_up_after_max_iter(open_tg, reader: str) -> None:  # noqa: ANN001
    """reader="paper": no answer after max_iter. The default (issue 47): after max_iter the one reader
    answers from what was collected anyway, and may abstain."""
    paper = reader == "paper"
    script = Script(select=keep_matching("Acme"),
                    eval=lambda r: json.dumps({"answerable": False}) if paper else stop(False),
                    nextq=lambda r: json.dumps({"questions": []}), read=lambda r: "Answer: Unknown")
    tg = open_tg(script)
    answer = await tg.aask("What is the airspeed of a swallow?", method="topg", max_iter=2, k=3, reader=reader)
    if paper:
        assert answer.status == "failed" and "after 2 iterations" in answer.message
    else:
        assert answer.status == "abstained" and answer.text == "Unknown" and script.calls.count("read") == 1
        assert [s.action for s in answer.trace][-2:] == ["topg.answer", "endpoint"]
    # Eval runs after each iteration (a repeat over unchanged facts is served by the LLM cache)
    assert [s.action for s in answer.trace].count("eval") == 2 and script.calls.count("nextq") == 1


async def test_malformed_select_falls_back_to_the_suggestions_and_is_counted(open_tg) -> None:  # noqa: ANN001
    """An unusable selection keeps every suggestion (the neutral default): a weak model's bad reply must
    not empty the pool the walk found. (After max_iter the one reader answers from it anyway, issue 47:
    here it abstains.)"""
    script = Script(select=lambda r: "I like facts 1 and 2", eval=lambda r: stop(False),
                    nextq=lambda r: json.dumps({"questions": []}), read=lambda r: "Answer: Unknown")
    tg = open_tg(script)
    answer = await tg.aask("Where is Acme Corp?", method="topg", max_iter=1, k=3)
    assert answer.status == "abstained" and tg.llm.meter.parse_failures >= 1
    fallbacks = [s for s in answer.trace if s.action == "select.fallback"]
    assert fallbacks and all(s.outputs["kept"] > 0 for s in fallbacks)
    assert answer.stats["select_fallbacks"] == len(fallbacks) and answer.evidence.nodes and answer.citations


@pytest.mark.parametrize("reader", ["shared", "paper"])
async def test_a_selection_that_keeps_nothing_leaves_the_entry_as_the_evidence(open_tg, reader: str) -> None:  # noqa: ANN001
    """Select kept no fact, so the evidence is the entry's propositions and their passages: with
    reader="paper" the answer fails and says so; with the one reader (the default, issue 47) the reader
    answers after max_iter (here it abstains), and the entry stays the evidence all the same."""
    paper = reader == "paper"
    script = Script(select=lambda r: keeping([]),
                    eval=lambda r: json.dumps({"answerable": False}) if paper else stop(False),
                    nextq=lambda r: json.dumps({"questions": []}), read=lambda r: "Answer: Unknown")
    tg = open_tg(script)
    answer = await tg.aask("Where is Acme Corp?", method="topg", max_iter=1, k=3, reader=reader)
    if paper:
        assert answer.status == "failed" and "the evidence is the entry's propositions" in answer.message
    else:
        assert answer.status == "abstained"
    assert len([n for n in answer.evidence.nodes if n.type == "proposition"]) == 3 and answer.citations


async def test_without_llm_returns_naive_evidence(open_tg) -> None:  # noqa: ANN001
    tg = open_tg(None)
    answer = await tg.aask("Alice Stone founded what?", method="topg", k=3, mode="naive")
    facts = [n for n in answer.evidence.nodes if n.type == "proposition"]
    assert answer.status == "evidence_only" and len(facts) == 3 and answer.evidence.nodes[0].type == "proposition"
    assert {n.type for n in answer.evidence.nodes} == {"proposition", "chunk"}  # the facts, then their passages


async def test_without_llm_local_mode_walks_from_the_naive_seeds(open_tg) -> None:  # noqa: ANN001
    tg = open_tg(None)
    naive = await tg.aask("Alice Stone founded what?", method="topg", k=3, mode="naive")
    walked = await tg.aask("Alice Stone founded what?", method="topg", k=3, max_iter=2, reader_order="collected")
    walked_facts = [n.id for n in walked.evidence.nodes if n.type == "proposition"]
    assert walked_facts[:3] == [n.id for n in naive.evidence.nodes if n.type == "proposition"]
    assert len(walked_facts) > 3 and len(set(walked_facts)) == len(walked_facts)
    assert [s.action for s in walked.trace] == ["suggest.naive", "suggest.local", "suggest.local"]


async def test_bad_option(open_tg) -> None:  # noqa: ANN001
    from thinkgraph.errors import ConfigError

    with pytest.raises(ConfigError, match="topg option mode"):
        await open_tg(None).aask("q", method="topg", mode="magic")


async def test_proposition_extraction_builds_the_graph_topg_walks(tmp_path: Path) -> None:
    def ner(request: ChatRequest) -> str:
        text = request.messages[0]["content"].split("Passage:", 1)[1]
        return json.dumps({"entities": [w.strip(".,") for w in text.split() if w[:1].isupper()
                                        and w not in ("Title:", "The")][:3]})

    def propositions(request: ChatRequest) -> str:
        content = request.messages[0]["content"]
        names = json.loads(content.split("Entities: ", 1)[1].split("\n", 1)[0].replace("'", '"'))
        sentence = content.rsplit("Passage:\n", 1)[1].splitlines()[-1]
        return json.dumps({"propositions": [{"text": sentence, "entities": names}]})

    settings = Settings()
    settings.index.extractor = "propositions"
    settings.index.summarize_communities = False
    settings.index.document_summaries = "first_sentences"
    backend = ScriptedBackend(rules=[("List the named entities", ner), ("Rewrite the passage", propositions)])
    with ThinkGraph(tmp_path / "p.db", settings=settings, embedder=HashEmbedder(), backend=backend) as tg:
        report = tg.index([FIXTURES / "bridge_corpus.jsonl"])
        assert report.indexed == 6 and report.extraction_failures == 0
        counts = tg.store.count_edges()
        assert tg.store.count_nodes()["proposition"] == 6 and counts["MENTIONS"] >= 6 and counts["FROM"] == 6
        from thinkgraph.methods.topg import build_proposition_graph

        graph = build_proposition_graph(tg.view)
        assert graph.n == 6 and "Alice Stone founded Acme Corp in 1990." in graph.texts
        row = graph.texts.index("Alice Stone founded Acme Corp in 1990.")
        assert len(graph.incidence[row].indices) >= 3  # entities and the passage
        assert len(backend.requests) == 12  # two calls per chunk


async def test_an_index_without_propositions_is_a_clear_error(tmp_path: Path) -> None:
    from thinkgraph.errors import InputError

    bare = Settings()
    bare.index.nolm_propositions = False  # (the default keeps sentences as propositions)
    with ThinkGraph(tmp_path / "n.db", settings=bare, embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"])  # model-free: entities only
        with pytest.raises(InputError, match="topg needs propositions or triplets"):
            await tg.aask("Who trained Lena Sorensen?", method="topg")


async def test_the_evidence_is_the_collected_facts_the_cited_first_and_not_what_select_pruned(open_tg) -> None:  # noqa: ANN001
    """reader="paper": Eval's JSON names the facts the answer rests on (with the one reader, the passages
    it cites are the citations)."""
    script = Script(select=lambda r: keeping([1]),
                    eval=lambda r: json.dumps({"answerable": True, "answer": "Rivertown", "facts": [2]}),
                    nextq=lambda r: json.dumps({"questions": []}))
    tg = open_tg(script)
    answer = await tg.aask("Where is Acme Corp?", method="topg", max_iter=1, k=3, reader="paper")
    shown = [s.inputs["suggested"] for s in answer.trace if s.action == "select"]
    kept = [fact for s in answer.trace if s.action == "select" for fact in s.outputs["kept"]]
    facts = [n.text for n in answer.evidence.nodes if n.type == "proposition"]
    assert answer.status == "answered" and shown == [3, 3] and len(kept) == 2
    assert facts == [kept[1], kept[0]]  # Eval's fact first, then s_loc; the four Select pruned are not returned
    chunks = [n.id for n in answer.evidence.nodes if n.type == "chunk"]
    assert [c.chunk_id for c in answer.citations] == chunks[:1] and len(answer.citations) == 1


@pytest.mark.parametrize("form", ["reasoned", "list"])
@pytest.mark.parametrize("most", [2, None])
async def test_select_max_bounds_a_select_that_keeps_everything(open_tg, most: int | None, form: str) -> None:  # noqa: ANN001
    """select_max (ours, 5 by default): Select is asked for at most that many facts, best first, and the
    first ones its reply lists are kept, in Suggest's order; None is the paper's unbounded pruning (every
    listed fact). The reasoned form (a switch) also caps the list in the schema the server's grammar
    follows (maxItems); a longer list from a server without a grammar is cut the same way."""
    requests: list[ChatRequest] = []

    def lax(request: ChatRequest) -> str:  # lists every fact, the last first
        requests.append(request)
        numbers = list(range(len(facts_in(request)), 0, -1))
        return keeping(numbers) if form == "reasoned" else json.dumps({"keep": numbers})

    script = Script(select=lax, eval=lambda r: stop(True), read=lambda r: "Answer: Rivertown [1]")
    tg = open_tg(script)
    answer = await tg.aask("Where is the company founded by Alice Stone based?", method="topg", k=5,
                           select_max=most, max_iter=1, select_form=form)
    first = next(s for s in answer.trace if s.action == "select")
    prompt = requests[0].messages[0]["content"]
    keep = schema_of(requests[0])["properties"]["keep"]
    if most is None:
        assert "at most" not in prompt and len(first.outputs["kept"]) == 5 and "listed" not in first.outputs
        assert keep.get("maxItems") == (MAX_ITEMS_PER_REPLY if form == "reasoned" else None)  # no Select bound
    else:
        asked = {"reasoned": "at most 2, best first", "list": "Keep at most 2: the ones that help most, best first."}
        assert asked[form] in prompt
        assert keep.get("maxItems") == (2 if form == "reasoned" else None)
        shown = [line.split("] ", 1)[1] for line in prompt.split("Facts:", 1)[1].splitlines() if line.startswith("[")]
        assert first.outputs["kept"] == shown[3:5] and first.outputs["listed"] == 5


@pytest.mark.parametrize("form", ["reasoned", "list"])
async def test_select_form_lays_out_the_reason_first_and_the_question_last(open_tg, form: str) -> None:  # noqa: ANN001
    """The reasoned Select (``select_form = "reasoned"``) shows the facts first, asks for its reason before
    the numbers (the schema's first required property, the order a grammar writes) and ends on the
    question, as every step of the question does (methods/layout.py); the reason is traced. ``"list"``
    (the default) is the former request: the question first and a bare list of numbers, word for word."""
    requests: list[ChatRequest] = []

    def select(request: ChatRequest) -> str:
        requests.append(request)
        facts = facts_in(request)
        numbers = [i for i, f in enumerate(facts, 1) if "Acme" in f]
        return keeping(numbers) if form == "reasoned" else json.dumps({"keep": numbers})

    script = Script(select=select, eval=lambda r: stop(True), read=lambda r: "Answer: Rivertown [1]")
    answer = await open_tg(script).aask("Where is Acme Corp based?", method="topg", k=5, max_iter=1,
                                        select_form=form)
    prompt = requests[0].messages[0]["content"]
    schema = schema_of(requests[0])
    first = next(s for s in answer.trace if s.action == "select")
    assert answer.status == "answered" and first.outputs["kept"]
    assert all("Acme" in fact for fact in first.outputs["kept"])
    if form == "reasoned":
        assert prompt.index("Facts:") < prompt.index("Keep only the facts") < prompt.index("Question:")
        assert prompt.rstrip().endswith("Question: Where is Acme Corp based?")
        assert schema["required"] == ["reason", "keep"] and list(schema["properties"])[0] == "reason"
        assert first.outputs["reason"] == "these facts name what the question asks about"
    else:
        facts = "\n".join(f"[{i}] {fact}" for i, fact in enumerate(facts_in(requests[0]), 1))
        assert prompt == SELECT.format(question="Where is Acme Corp based?", facts=facts, most="")
        assert list(schema["properties"]) == ["keep"] and "reason" not in first.outputs
    assert "select_fallbacks" not in answer.stats


@pytest.mark.parametrize("reply", [{"keep": [1]}, {"reason": "a loop", "keep": list(range(1, 1001))}])
async def test_a_reasoned_select_without_its_reason_keeps_every_suggestion(open_tg, reply: dict) -> None:  # noqa: ANN001
    """A reply without the reason the reasoned form asks for, or one listing more numbers than any reply
    may hold (llm/limits.py), is unusable: asked again, then every suggestion is kept (Select's neutral
    default), traced and counted."""
    script = Script(select=lambda r: json.dumps(reply), eval=lambda r: stop(True),
                    read=lambda r: "Answer: Rivertown [1]")
    answer = await open_tg(script).aask("Where is Acme Corp based?", method="topg", k=3, max_iter=1,
                                        select_form="reasoned")
    fallbacks = [s for s in answer.trace if s.action == "select.fallback"]
    assert fallbacks and answer.stats["select_fallbacks"] == len(fallbacks)
    assert all(s.outputs["kept"] == 3 for s in fallbacks)


async def test_each_query_is_embedded_once_per_question(open_tg, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """The entry, each iteration's Suggest-local and the reader's walk order share one embedding of the
    question (and one of each sub-question)."""
    script = Script(select=keep_all, eval=lambda r: stop(False), nextq=lambda r: json.dumps({"questions": []}),
                    read=lambda r: "Answer: Unknown")
    tg = open_tg(script)
    embedded: list[str] = []
    original = tg.view.embed_query

    def counting(text: str):  # noqa: ANN202
        embedded.append(text)
        return original(text)

    monkeypatch.setattr(tg.view, "embed_query", counting)
    question = "In which valley is Acme Corp's town?"
    await tg.aask(question, method="topg", k=2, max_iter=2)
    assert embedded.count(question) == 1
