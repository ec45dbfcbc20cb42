"""The one reader as the final step of a2rag, tog3, topg and kgr, each fed its own steps' evidence and
notes (``reader="paper"`` keeping the paper's template), and the judgements that decide on the way:
P(yes) against a method's threshold, a2rag's escalation past a draft that states no answer, and a
rewrite that repeats the question asked again once."""

from __future__ import annotations

import json
import math
import re

import pytest

from thinkgraph.llm.backend import ChatRequest, ChatResult
from thinkgraph.methods.reader import READER_INSTRUCTION
from thinkgraph.testing import ScriptedBackend

QUESTION = "Where is the company that Alice Stone founded based?"
BRIDGE = "based in Rivertown"
CHECK = "Check this answer"


def prompt_of(request: ChatRequest) -> str:
    return request.messages[-1]["content"]


def number_of(prompt: str, text: str) -> int | None:
    line = next((ln for ln in prompt.splitlines() if text in ln and re.match(r"\[\d+\]", ln)), None)
    return int(line[1:line.index("]")]) if line else None


def reader_reply(request: ChatRequest) -> str:
    """Reads as a careful model: Rivertown when both hops are shown, else Unknown."""
    prompt = prompt_of(request)
    a, b = number_of(prompt, "Alice Stone founded Acme"), number_of(prompt, BRIDGE)
    if a is None or b is None:
        return "Asks for: a place\nFacts: no passage says where Acme Corp is.\nAnswer: Unknown"
    return f"Asks for: a place\nFacts: Alice Stone founded Acme Corp [{a}]; Acme Corp is {BRIDGE} [{b}].\n" \
           f"Answer: Rivertown [{a}][{b}]"


def all_yes(request: ChatRequest) -> str:
    return json.dumps({"reason": "stated", "relevant": "yes", "grounded": "yes", "resolves": "yes"})


class LogprobScripted(ScriptedBackend):
    """A scripted backend that also returns log-probabilities for verdict fields: P(yes) of each field
    named in ``p_yes`` (the written verdicts stay as scripted)."""

    def __init__(self, rules: list, p_yes: dict[str, float]) -> None:  # noqa: ANN001
        super().__init__(rules=rules)
        self.p_yes = p_yes

    async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
        result = await super().chat(request)
        if request.top_logprobs:
            result.token_logprobs = self._tokens(result.text)
        return result

    def _tokens(self, text: str) -> list[tuple[str, list[tuple[str, float]]]]:
        tokens: list[tuple[str, list[tuple[str, float]]]] = []
        rest = text
        for match in re.finditer(r'"(\w+)": "(yes|no)"', text):
            key, value = match.group(1), match.group(2)
            head, rest = rest.split(match.group(0), 1)
            p = self.p_yes.get(key, 1.0 if value == "yes" else 0.0)
            alternatives = [(w, math.log(q)) for w, q in (("yes", p), ("no", 1 - p)) if q > 0]
            tokens += [(head + f'"{key}": "', []), (value, alternatives), ('"', [])]
        return tokens + [(rest, [])]


@pytest.mark.parametrize("threshold, status", [(0.5, "abstained"), (0.1, "answered")])
def test_a2rag_holds_p_yes_to_its_threshold_not_the_written_verdict(open_bridge, threshold: float,
                                                                  status: str) -> None:  # noqa: ANN001
    """Every check is written "yes", but P(grounded) is 0.2: it fails at 0.5 and passes at 0.1."""
    backend = LogprobScripted([(READER_INSTRUCTION, reader_reply), (CHECK, all_yes)], {"grounded": 0.2})
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag", check_threshold=threshold, rewrite=False)
    assert answer.status == status
    checks = [s for s in answer.trace if s.action == "check"]
    assert checks and checks[0].outputs["p_yes"]["grd"] == pytest.approx(0.2)
    assert all("logprobs" in r.payload() for r in backend.requests if CHECK in prompt_of(r))


def test_a2rag_escalates_past_a_draft_with_no_answer_and_checks_only_what_is_cited(open_bridge) -> None:  # noqa: ANN001
    """The default (verified sufficiency): the local stage's draft is Unknown, which fails without a
    Triple-Check call; the next stage's draft answers and is checked against the passages it cites."""
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, reader_reply), (CHECK, all_yes)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag")
    assert answer.status == "answered" and answer.text == "Rivertown" and answer.stats["stage"] != "local"
    drafts = [r for r in backend.requests if READER_INSTRUCTION in prompt_of(r)]
    checks = [prompt_of(r) for r in backend.requests if CHECK in prompt_of(r)]
    assert len(drafts) >= 2 and len(checks) == 1  # the Unknown draft cost no check
    shown = re.findall(r"^\[\d+\] .*$", checks[0], re.MULTILINE)
    assert len(shown) == 2 and all("Alice Stone founded" in s or BRIDGE in s for s in shown)
    assert "Check this answer to the question against the evidence above: Rivertown\n" in checks[0]
    first = next(s for s in answer.trace if s.action == "a2rag.answer")
    assert first.inputs["stage"] == "local" and first.outputs["sufficient"] is False


@pytest.mark.parametrize("from_draft", [True, False])
def test_a2rag_hands_on_what_an_abstaining_draft_reached_as_seeds(open_bridge, from_draft: bool) -> None:  # noqa: ANN001
    """Stage 1 reads Alice Stone's fact only; its draft abstains, and its reasoning names Acme Corp, an
    entity of the index the question does not name. With ``seeds_from_draft`` the bridge stage reads Acme
    Corp's own facts too (a one-seed question has no bridge to find) and its draft answers there; without,
    nothing changes at stage 2 and the answer waits for stage 3's walk."""
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, reader_reply), (CHECK, all_yes)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag", seeds_from_draft=from_draft)
    reached = [s for s in answer.trace if s.action == "seeds.reached"]
    bridge = next(s for s in answer.trace if s.action == "stage.bridge")
    assert answer.text == "Rivertown"
    if from_draft:
        assert reached[0].inputs["stage"] == "local" and "Acme Corp" in reached[0].inputs["names"]
        assert reached[0].outputs["entities"] == ["Acme Corp"]  # the names the index has
        assert bridge.outputs["reached_seed_facts"] >= 1 and answer.stats["stage"] == "bridge"
    else:
        assert not reached and "reached_seed_facts" not in bridge.outputs and answer.stats["stage"] == "ppr"


@pytest.mark.parametrize("stated_check", [True, False])
def test_a2rag_fails_an_answer_no_passage_states_before_any_verdict(open_bridge, stated_check: bool) -> None:  # noqa: ANN001
    """A draft naming what nothing shown states ("Paris") fails Triple-Check as "grd" without a call, and
    the attempts go on; ``stated_check=false`` leaves it to the verdict, which passes it here."""
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, "Reasoning: Acme Corp is in Paris [1].\nAnswer: Paris [1]"),
                                     (CHECK, all_yes)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag", stated_check=stated_check, rewrite=False)
    checks = [r for r in backend.requests if CHECK in prompt_of(r)]
    if stated_check:
        assert answer.status == "abstained" and not checks
        assert 'grd: the answer "Paris" is stated in none of the passages' in answer.message
    else:
        assert answer.text == "Paris" and len(checks) == 1


def test_a2rag_asks_a_rewrite_that_repeats_the_question_again_once(open_bridge) -> None:  # noqa: ANN001
    rewrites = iter([QUESTION, "Which town is Acme Corp based in?"])
    backend = ScriptedBackend(rules=[("is the question itself, word for word", lambda r: next(rewrites)),
                                     ("Reply with the rewritten question only", lambda r: next(rewrites)),
                                     (READER_INSTRUCTION, "Asks for: a place\nFacts: none.\nAnswer: Unknown")])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag", i_max=1)
    actions = [s.action for s in answer.trace]
    again = next(s for s in answer.trace if s.action.endswith(".again"))
    assert again.outputs["query"] == "Which town is Acme Corp based in?"
    assert answer.stats["attempts"] == 2 and actions.count("abstain") == 1
    seconds = [r for r in backend.requests if "is the question itself" in json.dumps(r.messages)]
    assert len(seconds) == 1 and seconds[0].messages[1] == {"role": "assistant", "content": QUESTION}


@pytest.mark.parametrize("reader", ["shared", "paper"])
def test_a2rag_reader_switch(open_bridge, reader: str) -> None:  # noqa: ANN001
    paper = "Answer the question using only the evidence below"
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, reader_reply), (paper, "Rivertown [1]"), (CHECK, all_yes)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag", reader=reader, sufficiency="all")
    drafts = [prompt_of(r) for r in backend.requests if CHECK not in prompt_of(r)]
    assert answer.text == "Rivertown"
    assert all((READER_INSTRUCTION in d) == (reader == "shared") and (paper in d) == (reader == "paper")
               for d in drafts)


@pytest.mark.parametrize("seed_notes", [True, False])
def test_a2rag_shows_the_seeds_each_passage_names_beside_its_passages(open_bridge, seed_notes: bool) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, reader_reply), (CHECK, all_yes)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag", seed_notes=seed_notes)
    draft = prompt_of(next(r for r in backend.requests if READER_INSTRUCTION in prompt_of(r)))
    assert answer.text == "Rivertown"
    title = "The question's entities each passage names:"
    assert (title in draft) is seed_notes
    if seed_notes:  # the passage of Alice Stone's founding names her, by its number in the draft
        lines = draft.split(title, 1)[1].split("\n\n", 1)[0]
        assert f"- [{number_of(draft, 'Alice Stone founded Acme')}] Alice Stone" in lines


def tog3_backend(final_rule: tuple[str, object]) -> ScriptedBackend:
    responses = iter(["Unknown", "Acme Corp"])
    return ScriptedBackend(rules=[("Give up to", "Acme Corp^Alice Stone"),
                                  ("Answer the query using only the context", lambda r: next(responses)),
                                  ("Judge whether the context", '{"reason": "the town is missing", "verdict": "no"}'),
                                  ("Write the next question", "Next question: Which company did Alice Stone found?"),
                                  ("Refine it:", "None"), ("build a small knowledge graph", '{"entities": []}'),
                                  final_rule])


def test_tog3_reads_the_trajectory_with_its_known_sub_answers(open_bridge) -> None:  # noqa: ANN001
    backend = tog3_backend((READER_INSTRUCTION, reader_reply))
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="tog3", horizon=1, use_communities=False)
    final = prompt_of(backend.requests[-1])
    assert READER_INSTRUCTION in final
    notes = final.split("Sub-questions answered along the way", 1)[1].split("\n\n", 1)[0]
    assert "- Which company did Alice Stone found? -> Acme Corp" in notes and "Unknown" not in notes
    assert answer.stats["outcome"] == "horizon" and next(s for s in answer.trace if s.action == "tog3.final")
    reflect = next(s for s in answer.trace if s.action == "sufficiency")
    # round one abstained: insufficient without a Reflector call (abstention_is_insufficient)
    assert reflect.outputs["reward"] == 0 and "no Reflector call" in reflect.outputs["reason"]
    assert not any("Judge whether the context" in prompt_of(r) for r in backend.requests)


@pytest.mark.parametrize("reader_notes", ["all", "answers"])
def test_tog3_reader_notes_switch(open_bridge, reader_notes: str) -> None:  # noqa: ANN001
    """"all": the subgraph's triples and community summaries beside the sub-answers; "answers": the
    sub-answers alone."""
    backend = tog3_backend((READER_INSTRUCTION, reader_reply))
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="tog3", horizon=1, reader_notes=reader_notes)
    final = prompt_of(backend.requests[-1])
    assert answer.text == "Rivertown" and "- Which company did Alice Stone found? -> Acme Corp" in final
    assert ("Facts from the knowledge graph" in final) is (reader_notes == "all")
    assert ("Summaries of related parts of the graph" in final) is (reader_notes == "all")


def test_tog3_reader_paper_is_the_final_template(open_bridge) -> None:  # noqa: ANN001
    backend = tog3_backend(("reasoning trajectory and the evidence", "Answer: Rivertown [1]"))
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="tog3", horizon=1, use_communities=False, reader="paper")
    assert answer.text == "Rivertown" and READER_INSTRUCTION not in prompt_of(backend.requests[-1])


def keep_all(request: ChatRequest) -> str:
    return json.dumps({"reason": "all help", "keep": list(range(1, 30))})


def test_topg_eval_stops_and_the_reader_answers_from_the_facts_passages(open_bridge) -> None:  # noqa: ANN001
    verdicts = iter(["no", "yes"])
    backend = ScriptedBackend(rules=[
        ("Keep only the facts", keep_all),
        ("Can the question be answered from the facts above",
         lambda r: json.dumps({"reason": "one hop", "verdict": next(verdicts)})),
        ("targeted sub-questions", json.dumps({"questions": ["Where is Acme Corp based?"]})),
        (READER_INSTRUCTION, reader_reply)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="topg", k=3)
    assert answer.text == "Rivertown" and answer.status == "answered"
    verdicts_read = [s.outputs["answerable"] for s in answer.trace if s.action == "eval"]
    assert verdicts_read[0] is False and verdicts_read[-1] is True  # (an unchanged prompt is the cache's)
    final = prompt_of(backend.requests[-1])
    assert "Passages:" in final and "Facts selected" not in final  # reader_facts = 0: the passages alone
    assert {c.quote for c in answer.citations} == {"Alice Stone founded Acme Corp in 1990.",
                                                    "Acme Corp is based in Rivertown."}


def test_topg_reads_what_it_collected_at_max_iter_and_may_abstain(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[
        ("Keep only the facts", json.dumps({"reason": "none helps", "keep": []})),
        ("Can the question be answered from the facts above", json.dumps({"reason": "none", "verdict": "no"})),
        ("targeted sub-questions", json.dumps({"questions": []})),
        (READER_INSTRUCTION, "Asks for: a speed\nFacts: none is about swallows.\nAnswer: Unknown")])
    with open_bridge(backend) as tg:
        answer = tg.ask("What is the airspeed of a swallow?", method="topg", max_iter=2, k=3)
    assert answer.status == "abstained" and any(s.action == "topg.answer" for s in answer.trace)
    # Select kept nothing: no Eval over no facts, and the reader read the entry's propositions
    assert not any(s.action == "eval" for s in answer.trace) and "entry's propositions" in answer.message
    assert "Passages:\n[1]" in prompt_of(backend.requests[-1])


@pytest.mark.parametrize("reader, text", [("shared", "Rivertown"), ("paper", "Acme Corp")])
async def test_kgr_reads_the_passages_behind_the_chain(open_bridge, reader: str, text: str) -> None:  # noqa: ANN001
    """The chain stops at the bridge entity (Finish[Acme Corp]); the reader, given the passages behind
    the nodes it visited, answers the last hop. ``reader="paper"`` keeps the chain's Finish."""
    tg = open_bridge()
    alice = next(n for n in tg.store.iter_nodes("entity") if n.text == "Alice Stone")
    acme = next(n for n in tg.store.iter_nodes("entity") if n.text == "Acme Corp")
    tg.close()
    backend = ScriptedBackend(script=[f"Thought: find her.\nAction: RetrieveNode[{alice.text}]",
                                      f"Thought: the company.\nAction: RetrieveNode[{acme.text}]",
                                      "Thought: done.\nAction: Finish[Acme Corp]"],
                              rules=[(READER_INSTRUCTION, reader_reply)])
    tg = open_bridge(backend)
    answer = await tg.aask(QUESTION, "kgr", reader=reader)
    assert answer.text == text
    read = [s for s in answer.trace if s.action == "kgr.read"]
    assert bool(read) == (reader == "shared")
    if read:
        final = prompt_of(backend.requests[-1])
        assert "The graph search's own answer:\n- Acme Corp" in final
        assert f"- RetrieveNode[{acme.text}] -> " in final.split("Steps the graph search took", 1)[1]
        assert answer.stats["reader"] == "shared" and len(answer.citations) == 2


def test_a2rag_never_verifies_a_draft_that_copies_the_preamble_or_was_cut(open_bridge) -> None:  # noqa: ANN001
    """A weak model's copy of the layout's preamble is no answer (Gemma 3 270M's was verified and
    cached); nor is a draft the completion cap cut: neither reaches Triple-Check."""
    from thinkgraph.methods.layout import PREAMBLE

    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, PREAMBLE), (CHECK, all_yes),
                                     ("Reply with the rewritten question only", QUESTION)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="a2rag")
    assert answer.status == "abstained" and not any(CHECK in prompt_of(r) for r in backend.requests)

    class Cut(ScriptedBackend):
        async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
            result = await super().chat(request)
            if any(READER_INSTRUCTION in m["content"] for m in request.messages):  # its repair too
                result.finish_reason = "length"
            return result

    cut = Cut(rules=[(READER_INSTRUCTION, "Asks for: a place\nFacts: Acme Corp is based in"), (CHECK, all_yes),
                     ("Reply with the rewritten question only", QUESTION)])
    with open_bridge(cut) as tg:
        answer = tg.ask(QUESTION, method="a2rag", rewrite=False)
    assert answer.status == "abstained" and not any(CHECK in prompt_of(r) for r in cut.requests)
    assert "cut off at the completion cap" in answer.message


def test_tog3_leaves_a_round_answer_the_reflector_judged_insufficient_out_of_the_known(open_bridge) -> None:  # noqa: ANN001
    """The Reflector judged round one's answer insufficient: the reader is not told it as known (a small
    reader copies it), and the sub-question's answer is."""
    backend = tog3_backend((READER_INSTRUCTION, reader_reply))
    responses = iter(["Harbor Mills", "Acme Corp"])
    backend.rules[1] = ("Answer the query using only the context", lambda r: next(responses))
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="tog3", horizon=1, use_communities=False)
    reflect = next(s for s in answer.trace if s.action == "sufficiency")
    assert reflect.outputs["reward"] == 0 and "no Reflector call" not in reflect.outputs["reason"]
    notes = prompt_of(backend.requests[-1]).split("Sub-questions answered along the way", 1)[1].split("\n\n", 1)[0]
    assert "- Which company did Alice Stone found? -> Acme Corp" in notes and "Harbor Mills" not in notes


def test_copied_instructions_and_placeholders_never_become_queries_or_sub_answers(open_bridge) -> None:  # noqa: ANN001
    """tog3's keywords and Responser, topg's NextQ: what a weak model copies from the prompt (Gemma 3
    270M did each) is dropped, not searched for or handed to the reader as a sub-answer."""
    from thinkgraph.methods.layout import PREAMBLE

    copied = "Reply on one line, keywords separated by '^', like: keyword one^keyword two^keyword three"
    backend = tog3_backend((READER_INSTRUCTION, reader_reply))
    backend.rules[:2] = [("Give up to", copied), ("Answer the query using only the context", PREAMBLE)]
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="tog3", horizon=1, use_communities=False)
    assert next(s for s in answer.trace if s.action == "retrieve").inputs["keywords"] == []
    assert {s.outputs["answer"] for s in answer.trace if s.action == "respond"} == {"Unknown"}
    assert "Sub-questions answered along the way" not in prompt_of(backend.requests[-1])

    backend = ScriptedBackend(rules=[
        ("Keep only the facts", keep_all),
        ("Can the question be answered from the facts above", json.dumps({"reason": "no", "verdict": "no"})),
        ("targeted sub-questions", json.dumps({"questions": ["...", "Where is Acme Corp based?"]})),
        (READER_INSTRUCTION, reader_reply)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="topg", k=3, max_iter=2)
    queries = [s.inputs["query"] for s in answer.trace if s.action == "suggest.local"]
    assert "..." not in queries and "Where is Acme Corp based?" in queries


def topg_keeping_everything() -> ScriptedBackend:
    """topg with a Select that keeps every fact, an Eval that never stops and no sub-questions: one
    iteration, then the reader, which abstains."""
    return ScriptedBackend(rules=[
        ("Keep only the facts", keep_all),
        ("Can the question be answered from the facts above", json.dumps({"reason": "none", "verdict": "no"})),
        ("targeted sub-questions", json.dumps({"questions": []})),
        (READER_INSTRUCTION, "Asks for: a place\nFacts: none.\nAnswer: Unknown")])


@pytest.mark.parametrize("order", ["rounds", "collected"])
def test_topg_reads_each_rounds_facts_in_turn(open_bridge, order: str) -> None:  # noqa: ANN001
    """The reader's passages: with reader_order="rounds" (a switch) the passage of the entry's first
    fact, then that of the first fact the iteration's walk added; with "collected" (the default), the
    facts' order (the entry's facts come from two passages, which fill the two places)."""
    from support import FIXTURES

    passage_of = {" ".join(t): row["doc_id"] for line in (FIXTURES / "bridge_openie.jsonl").read_text().splitlines()
                  for row in [json.loads(line)] for t in row["triples"]}
    backend = topg_keeping_everything()
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="topg", k=3, max_iter=1, reader_passages=2, reader_order=order,
                        reader_fill="none")  # the facts' passages alone (the walk's fill: test_topg_fill.py)
        titles = {n.id: n.props["doc_id"] for n in tg.store.iter_nodes("chunk")}
    selects = [s for s in answer.trace if s.action == "select"]
    entry = list(dict.fromkeys(passage_of[t] for t in selects[0].outputs["kept"]))
    walked = list(dict.fromkeys(passage_of[t] for s in selects[1:] for t in s.outputs["kept"]))
    assert len(entry) == 2 and walked[0] not in entry  # (so that the two orders differ)
    read = next(s for s in answer.trace if s.action == "topg.answer")
    expected = [entry[0], walked[0]] if order == "rounds" else entry
    assert [titles[c] for c in read.inputs["passages"]] == expected


@pytest.mark.parametrize(("order", "read"), [("walk", ["c2", "c3"]), ("collected", ["c2", "c1"])])
def test_topg_walk_order_reads_the_next_hop_before_the_entrys_other_facts(open_bridge, order: str,  # noqa: ANN001
                                                                          read: list[str]) -> None:
    """reader_order="walk" (the default): the reader reads the collected facts' passages in the order the
    walk on M among them ranks the facts (traced as rank_collected), and notes the facts in that order.
    Every fact is kept, so in the order collected the entry's second passage (c1, Alice Stone founded
    Acme Corp) is read; the walk puts the second hop (c3, Rivertown lies in Greenland Valley), reached
    from the first fact through Rivertown, before it."""
    backend = topg_keeping_everything()
    with open_bridge(backend) as tg:
        answer = tg.ask("In which valley is the town where Acme Corp is based?", method="topg", k=2, max_iter=1,
                        reader_passages=2, reader_order=order, reader_facts=30)
        titles = {n.id: n.props["doc_id"] for n in tg.store.iter_nodes("chunk")}
    step = next(s for s in answer.trace if s.action == "topg.answer")
    assert [titles[c] for c in step.inputs["passages"]] == read
    ranked = [s for s in answer.trace if s.action == "rank_collected"]
    assert len(ranked) == (order == "walk")
    if ranked:
        notes = prompt_of(backend.requests[-1]).split("Facts selected from the knowledge graph", 1)[1]
        first = ranked[0].outputs["first"]
        assert notes.index(first[0]) < notes.index(first[1]) < notes.index(first[-1])


@pytest.mark.parametrize("noted", [2, 0])
def test_topg_reader_facts_bounds_the_facts_noted(open_bridge, noted: int) -> None:  # noqa: ANN001
    """reader_facts: how many of the collected facts the reader notes beside its passages (none: no
    notes), the first in the reader's order."""
    backend = topg_keeping_everything()
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="topg", k=3, max_iter=1, reader_facts=noted)
    step = next(s for s in answer.trace if s.action == "topg.answer")
    assert step.inputs["facts"] == 6
    prompt = prompt_of(backend.requests[-1])
    if noted:
        notes = prompt.split("Facts selected from the knowledge graph", 1)[1]
        first = next(s for s in answer.trace if s.action == "rank_collected").outputs["first"]
        assert first[0] in notes and first[1] in notes and first[2] not in notes
    else:
        assert "Facts selected from the knowledge graph" not in prompt


def test_interleaved_takes_each_list_in_turn_without_repeats() -> None:
    from thinkgraph.retrieval.fusion import interleaved

    assert interleaved([["a", "b", "c"], ["d"], ["b", "e"]], 10) == ["a", "d", "b", "e", "c"]
    assert interleaved([["a", "b"], ["c", "d"]], 3) == ["a", "c", "b"]
    assert interleaved([], 5) == [] and interleaved([["a"]], 0) == [] and interleaved([["a"], ["b"]]) == ["a", "b"]
