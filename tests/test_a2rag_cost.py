"""A2RAG at the paper's cost (Tables II-III: 2.0 calls per question on HotpotQA). With the defaults the
seeds come from the phrase extractor (no call), a stage's sufficiency is its draft verified by
Triple-Check (sufficiency="verified", the default since issue 47: a draft that states no answer
escalates without a check, a rejected one escalates to the next stage) and Triple-Check is one
structured verdict: a question verified at stage 1 on the first attempt costs two calls. Pinned here
with a scripted model that follows the formats and reads its prompts, beside ircot on the same 2-hop
question."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from thinkgraph.llm.backend import ChatRequest, ChatResult
from thinkgraph.methods.a2rag.rewrite import asks_about_instructions, names_new
from thinkgraph.testing import ScriptedBackend

QUESTION = "Where is the company that Alice Stone founded based?"
BRIDGE = "Acme Corp is based in Rivertown"
# The previous default, kept as switches: the shared walk orders the evidence and is stage 3, and a stage is
# drafted only when it shows the walk's best 5.
WALK_FORM = {"stage3": "shared_walk", "evidence_order": "shared_walk", "sufficiency_precheck": 5}
# The draft is the one reader's prompt (ircot's reader shares it: recorded as "draft"), or the paper's
# ANSWER template with reader="paper".
# The draft is the one reader's prompt (ircot's reader shares it: recorded as "draft"), or the paper's
# ANSWER template with reader="paper".
NEEDLES = {"draft": ("Answer the question using only the numbered passages below",
                     "Answer the question using only the evidence below"),
           "check": ("Check this answer to the question against the evidence above",),
           "rewrite": ("Reply with the rewritten question only",), "reason": ("Write only the\nNEXT sentence",)}
CHECK_LEAD = "Check this answer to the question against the evidence above: "


def verdict(reason: str, *, relevant: bool, grounded: bool, resolves: bool) -> str:
    """A joint Triple-Check reply: the reason first, then the three verdicts as "yes"/"no"."""
    yes = {True: "yes", False: "no"}
    return json.dumps({"reason": reason, "relevant": yes[relevant], "grounded": yes[grounded],
                       "resolves": yes[resolves]})


class Model:
    """Answers from the passages it is shown ("Unknown" when the fact that answers is not among them),
    verifies what the evidence states, and reasons step by step for ircot."""

    def __init__(self, *, check: str | None = None, fact: str = BRIDGE, answer: str = "Rivertown") -> None:
        self.calls: list[str] = []
        self.check_reply = check
        self.fact, self.answer = fact, answer
        # (a rewrite asked again shows the model its reply, which may be an echo of another prompt: its
        # needle is matched first)
        handlers = {"rewrite": self.rewrite, "draft": self.draft, "check": self.check, "reason": self.reason}
        self.backend = ScriptedBackend(rules=[(needle, self._on(k, h)) for k, h in handlers.items()
                                              for needle in NEEDLES[k]])

    def _on(self, kind: str, handler):  # noqa: ANN001, ANN202
        def reply(request: ChatRequest) -> str:
            self.calls.append(kind)
            return handler(request.messages[0]["content"])
        return reply

    def draft(self, prompt: str) -> str:
        found = re.search(r"\[(\d+)\] [^\n]*" + self.fact, prompt)
        return f"{self.answer} [{found.group(1)}]" if found else "Unknown"

    def check(self, prompt: str) -> str:
        if self.check_reply is not None:
            return self.check_reply
        # the parsed answer, after the evidence (the passages the draft cites) and before the question
        evidence, instruction = prompt.split(CHECK_LEAD, 1)
        answer = instruction.split("\n", 1)[0].strip()
        grounded = answer != "Unknown" and answer in evidence.split("Passages:", 1)[1]
        return verdict("ok" if grounded else "the answer is not stated", relevant=True, grounded=grounded,
                       resolves=answer != "Unknown")

    @staticmethod
    def rewrite(prompt: str) -> str:
        return "In which town is Acme Corp based?"

    @staticmethod
    def reason(prompt: str) -> str:
        thoughts = prompt.split("Reasoning so far:", 1)[1]
        if "Acme Corp" not in thoughts:
            return "Alice Stone founded Acme Corp."
        if "Rivertown" not in thoughts:
            return "Acme Corp is based in Rivertown."
        return "So the answer is: Rivertown."


@pytest.fixture
def ask(open_bridge):  # noqa: ANN001, ANN201
    async def run(model: Model, method: str = "a2rag", question: str = QUESTION, **options: object):  # noqa: ANN202
        tg = open_bridge(model.backend)
        return await tg.aask(question, method=method, **options)
    return run


async def test_verified_at_the_first_stage_costs_two_calls(ask) -> None:  # noqa: ANN001
    model = Model(fact="Alice Stone founded Acme Corp", answer="Acme Corp")
    # stage 1 holds the fact; drafting there whatever the walk ranks first (the pre-check is pinned below)
    answer = await ask(model, question="Which company did Alice Stone found?", sufficiency_precheck=0)
    assert answer.status == "answered" and answer.text == "Acme Corp" and answer.cost.calls == 2
    assert model.calls == ["draft", "check"]
    assert answer.stats["stage"] == "local" and answer.stats["outcome"] == "verified"
    actions = [s.action for s in answer.trace]
    assert actions[:4] == ["gate", "seeds", "stage.local", "a2rag.answer"] and "check" in actions
    assert next(s for s in answer.trace if s.action == "seeds").outputs["source"] == "phrases"


class CutDrafts:
    """``Model``'s server, but every draft is cut at the completion cap after its answer line (Gemma 3 270M
    wrote "Answer: X" and then ran on to the cap)."""

    def __init__(self, model: Model) -> None:
        self.model = model

    async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
        result = await self.model.backend.chat(request)
        if self.model.calls[-1] != "draft":
            return result
        return replace(result, text=f"Answer: {result.text}\nThe passage says so. The passage says so. The",
                       finish_reason="length")


async def test_a_draft_cut_at_the_cap_after_its_answer_is_checked_and_given_as_truncated(open_bridge) -> None:  # noqa: ANN001
    model = Model(fact="Alice Stone founded Acme Corp", answer="Acme Corp")
    tg = open_bridge(CutDrafts(model))
    answer = await tg.aask("Which company did Alice Stone found?", method="a2rag", sufficiency_precheck=0)
    assert model.calls == ["draft", "check"]
    check = model.backend.requests[1].messages[0]["content"]
    assert CHECK_LEAD + "Acme Corp\n" in check  # the answer line, not the run-on
    assert answer.status == "truncated" and answer.text == "Acme Corp" and "completion cap" in (answer.message or "")
    assert answer.stats["outcome"] == "verified" and answer.citations


async def test_a_stage_that_adds_evidence_costs_one_draft_and_one_that_adds_none_costs_nothing(ask) -> None:  # noqa: ANN001
    model = Model()
    # one seed (Alice Stone): stage 1 shows her passage only (Unknown), stage 2 finds no bridge between
    # seeds (nothing new: no draft), stage 3's walk reaches the bridge passage, answered and verified
    answer = await ask(model, i_max=0, sufficiency_precheck=0)
    drafts = [s for s in answer.trace if s.action == "a2rag.answer"]
    assert [s.inputs["stage"] for s in drafts] == ["local", "ppr"] and not drafts[0].outputs["sufficient"]
    assert model.calls == ["draft", "draft", "check"] and answer.cost.calls == 3 and answer.cost.cached_calls == 0
    assert answer.status == "answered" and answer.stats["stage"] == "ppr"


async def test_a_draft_restating_the_question_is_checked_and_answered_as_its_short_answer(ask) -> None:  # noqa: ANN001
    """Triple-Check reads the short answer inside a sentence that restates the question, and that is
    the answer given (methods/answer_shape.py)."""
    model = Model(answer="Rivertown is where the company that Alice Stone founded is based.")
    answer = await ask(model, i_max=0, sufficiency_precheck=0)
    assert answer.status == "answered" and answer.text == "Rivertown"
    check = model.backend.requests[model.calls.index("check")].messages[0]["content"]
    assert CHECK_LEAD + "Rivertown\n" in check


async def test_a_joint_verdict_keeps_the_failure_types_and_their_order(ask) -> None:  # noqa: ANN001
    model = Model(check=verdict("not stated", relevant=True, grounded=False, resolves=False))
    answer = await ask(model, i_max=1)
    assert answer.status == "abstained" and answer.stats["failure"] == "grd"  # the first failed check
    assert model.calls.count("rewrite") == 1 and model.calls.count("check") == 2
    check = next(s for s in answer.trace if s.action == "check")
    # the verdicts as decided, as written, and P(yes) of each (None: the scripted server gives no
    # log-probabilities, so the written verdicts decide)
    assert check.outputs == {"rel": True, "grd": False, "ans": False, "p_yes": {"rel": None, "grd": None, "ans": None},
                             "written": {"rel": "yes", "grd": "no", "ans": "no"}, "threshold": 0.5,
                             "failure": "grd", "reason": "not stated"}


async def test_an_unusable_joint_verdict_is_a_failed_check(ask) -> None:  # noqa: ANN001
    model = Model(check="I think it is fine.")
    answer = await ask(model, i_max=0)
    assert answer.status == "abstained" and answer.stats["failure"] == "rel" and answer.text is None


async def test_a_stage_without_the_walks_best_passages_escalates_without_a_draft(ask) -> None:  # noqa: ANN001
    """The previous default, kept as switches: the walk's pre-check (off in the paper form)."""
    model = Model()
    answer = await ask(model, i_max=0, **WALK_FORM)  # the walk ranks the bridge passage first; stage 1 lacks it
    assert model.calls == ["draft", "check"] and answer.cost.calls == 2 and answer.stats["stage"] == "ppr"
    precheck = next(s for s in answer.trace if s.action == "sufficiency.local")
    assert precheck.inputs == {"precheck": "walk"} and precheck.outputs["missing_best_passages"]


async def test_a_rewrite_that_changes_nothing_ends_the_retries(ask) -> None:  # noqa: ANN001
    """A rewrite that repeats the question is asked again once, told why (issue 47: the loop ended at
    once); repeated again, the loop ends."""
    class Stubborn(Model):
        def rewrite(self, prompt: str) -> str:
            return "  where is the company that alice stone founded based? "

    model = Stubborn(check=verdict("off", relevant=False, grounded=True, resolves=True))
    answer = await ask(model, i_max=2)
    assert model.calls.count("rewrite") == 2 and model.calls.count("check") == 1 and answer.status == "abstained"
    assert "the rewrite asked nothing new" in answer.message
    rewrites = [s.action for s in answer.trace if s.action.startswith("rewrite.")]
    assert rewrites == ["rewrite.rel", "rewrite.rel.again"]
    again = model.backend.requests[-1].messages
    assert [m["role"] for m in again] == ["user", "assistant", "user"]
    assert again[1]["content"] == "where is the company that alice stone founded based?"  # its reply, as written
    assert "Your rewrite is the question itself" in again[2]["content"]


ANSWER_PROMPT_ECHO = ("Answer the question using only the evidence below (facts from a knowledge graph and "
                      "numbered source passages).")
READER_PROMPT_ECHO = ("Answer the question using only the numbered passages below (the question is at the end).")


@pytest.mark.parametrize("echo", ["rewrite_prompt", "answer_prompt", "reader_prompt", "no_word_of_the_question"])
async def test_a_rewrite_that_echoes_the_instructions_ends_the_retries(ask, echo: str) -> None:  # noqa: ANN001
    """Gemma 3 270M answered a rewrite with the rewrite prompt's own first lines, and once with the answer
    prompt's first line (the paper's ANSWER template; the one reader's is the default answer prompt now);
    searching with either wastes the retry, so it counts as no rewrite (the same query). Since issue 47
    a rewrite that is the question is asked again once; echoed again, the loop ends. So does a rewrite
    that says none of the question's words: Qwen2.5-1.5B, told its rewrite repeated the question, wrote
    the instruction's own words as a question, which searched for nothing of it."""
    class Echo(Model):
        def rewrite(self, prompt: str) -> str:
            return {"rewrite_prompt": prompt.split("\n\n", 1)[0], "answer_prompt": ANSWER_PROMPT_ECHO,
                    "reader_prompt": READER_PROMPT_ECHO,
                    "no_word_of_the_question": "What entity and relation must be found in the sources to answer "
                                               "this question?"}[echo]

    model = Echo(check=verdict("off", relevant=False, grounded=True, resolves=True))
    answer = await ask(model, i_max=2)
    assert model.calls.count("rewrite") == 2 and model.calls.count("check") == 1 and answer.status == "abstained"
    assert "the rewrite asked nothing new" in answer.message and "retry budget spent" not in answer.message
    assert answer.stats["outcome"] == "rewrite_unchanged"
    steps = [s for s in answer.trace if s.action.startswith("rewrite.")]
    assert [s.action for s in steps] == ["rewrite.rel", "rewrite.rel.again"]
    assert all(s.outputs["query"] == "Where is the company that Alice Stone founded based?" for s in steps)


async def test_calls_beside_ircot_on_the_same_questions(ask) -> None:  # noqa: ANN001
    """The call counts only: on one-sentence passages the prompts' own words outweigh the evidence,
    so tokens are compared on MuSiQue (benchmarks/a2rag_cost.py) and with a real model (README)."""
    two_hop = await ask(Model(), i_max=0)
    ircot = await ask(Model(), method="ircot")
    assert two_hop.text == ircot.text == "Rivertown"
    # a2rag drafts at stage 1 ("Unknown": escalate) and at stage 3, then checks; IRCoT reasons twice,
    # states the answer, and its reader answers. With the walk's pre-check stage 1 costs no draft.
    assert ircot.cost.calls == 4 and two_hop.cost.calls == 3
    # (its Triple-Check reads the same answer and the same cited passage as the run above's, since it reads
    # only the parsed answer and the passages it cites: served from the cache)
    walk_form = (await ask(Model(), i_max=0, **WALK_FORM)).cost
    assert walk_form.calls + walk_form.cached_calls == 2
    chain_only = await ask(Model(), method="ircot", reader="cot")
    assert chain_only.text == "Rivertown" and chain_only.cost.calls + chain_only.cost.cached_calls == 3
    one_hop = await ask(Model(fact="Alice Stone founded Acme Corp", answer="Acme Corp"),
                        question="Which company did Alice Stone found?")
    assert one_hop.cost.calls == 2


async def test_the_paper_literal_forms_remain_switches(ask) -> None:  # noqa: ANN001
    model = Model()
    answer = await ask(model, i_max=0, sufficiency="all", triple_check="joint")
    assert model.calls == ["draft", "check"] and answer.stats["stage"] == "ppr"  # every stage ran first


@pytest.mark.parametrize("retriever", ["ppr", "bm25", "dense"])
async def test_ircot_retrieves_with_the_chosen_retriever(ask, retriever: str) -> None:  # noqa: ANN001
    answer = await ask(Model(), method="ircot", retriever=retriever)
    steps = [s.action for s in answer.trace if s.agent == "retriever"]
    assert steps and set(steps) == {f"retrieve.{retriever}"} and answer.stats["retriever"] == retriever
    assert answer.text == "Rivertown" and "c2" in {c.doc_id for c in answer.citations}


async def test_an_abstention_shows_the_questions_own_evidence_not_a_drifted_rewrites(ask) -> None:  # noqa: ANN001
    class Drifting(Model):
        def rewrite(self, prompt: str) -> str:
            return "Which company is based on the Moon?"

    model = Drifting(check=verdict("no", relevant=False, grounded=False, resolves=False))
    answer = await ask(model, i_max=1, evidence_chunks=2)
    assert answer.status == "abstained" and model.calls.count("rewrite") == 1
    shown = {n.props.get("doc_id") for n in answer.evidence.nodes if n.type == "chunk"}
    assert "c2" in shown and "c6" not in shown  # the bridge found for the question, not the Moon passage


async def test_an_abstention_after_an_early_stop_shows_only_the_stages_it_ran(ask) -> None:  # noqa: ANN001
    """sufficiency="answer" (the default before issue 47): a draft that states an answer stops the
    escalation, so a rejected one ends the attempt at its stage."""
    class Hasty(Model):
        def draft(self, prompt: str) -> str:
            return "Acme Corp [1]"  # answers at once, whatever the evidence

    model = Hasty(check=verdict("no", relevant=True, grounded=False, resolves=False))
    answer = await ask(model, i_max=0, sufficiency_precheck=0, sufficiency="answer")
    stages = [s.action for s in answer.trace if s.action.startswith("stage.")]
    assert stages == ["stage.local"] and answer.status == "abstained"  # it stopped at stage 1
    shown = {n.props.get("doc_id") for n in answer.evidence.nodes if n.type == "chunk"}
    assert shown and "c2" not in shown  # the bridge passage only the later stages reach: never retrieved, not shown


async def test_an_answer_verified_after_a_rewrite_shows_its_own_evidence_then_the_questions(ask) -> None:  # noqa: ANN001
    """sufficiency="answer" (the default before issue 47), so that the first attempt stops at stage 1 and
    the answer is verified only after the rewrite."""
    class Second(Model):
        checks = 0

        def check(self, prompt: str) -> str:
            Second.checks += 1
            ok = Second.checks > 1
            return verdict("ok" if ok else "off", relevant=ok, grounded=ok, resolves=ok)

        def draft(self, prompt: str) -> str:
            return "Earth [1]"

        def rewrite(self, prompt: str) -> str:
            return "Which company is based on the Moon?"

    answer = await ask(Second(), i_max=1, evidence_chunks=2, sufficiency="answer", stated_check=False)
    assert answer.status == "answered" and answer.stats["attempts"] == 2
    shown = [n.props.get("doc_id") for n in answer.evidence.nodes if n.type == "chunk"]
    assert shown[0] == "c6" and "c1" in shown  # the rewrite's passages the answer cites, then the question's own
    assert "c2" not in shown  # stage 1 was the question's last stage: the bridge passage was never retrieved
    assert [c.doc_id for c in answer.citations] == ["c6"]


class Guesser(Model):
    """A small model's habit: a draft names something whatever the evidence (the bridge passage's answer
    when it is shown, a guess otherwise); the check passes only what the evidence states."""

    def draft(self, prompt: str) -> str:
        found = re.search(r"\[(\d+)\] [^\n]*" + self.fact, prompt)
        return f"{self.answer} [{found.group(1)}]" if found else "Springfield [1]"


async def test_verified_sufficiency_escalates_past_a_rejected_draft(ask) -> None:  # noqa: ANN001
    """sufficiency="verified" (ours): stage 1's guess fails Triple-Check, so the retriever escalates
    (stage 2 adds nothing: no draft) and stage 3's draft is verified there, in the same attempt."""
    model = Guesser()
    answer = await ask(model, i_max=0, sufficiency="verified", stated_check=False)  # (scripted: stated nowhere)
    assert model.calls == ["draft", "check", "draft", "check"] and answer.cost.calls == 4
    assert answer.status == "answered" and answer.text == "Rivertown" and answer.stats["stage"] == "ppr"
    assert "c2" in {c.doc_id for c in answer.citations}
    (rejected,) = [s for s in answer.trace if s.action == "sufficiency.local"]
    assert rejected.outputs["sufficient"] is False and rejected.outputs["failure"] == "grd"


async def test_a_draft_verified_during_the_escalation_is_not_checked_again(ask) -> None:  # noqa: ANN001
    model = Guesser(fact="Alice Stone founded Acme Corp", answer="Acme Corp")
    answer = await ask(model, question="Which company did Alice Stone found?", sufficiency="verified")
    assert model.calls == ["draft", "check"] and answer.cost.calls == 2 and answer.stats["stage"] == "local"
    assert answer.status == "answered" and answer.text == "Acme Corp"


async def test_the_default_sufficiency_stops_at_the_guess_and_abstains(ask) -> None:  # noqa: ANN001
    """Beside the test above, the same model and question with sufficiency="answer", the default until
    issue 47 (the name is kept for docs/fidelity.md; the default is now "verified", the test above): the
    draft judges stage 1 sufficient, the check rejects it and no retry is left, so the verdict decides the
    outcome and the citations."""
    model = Guesser()
    answer = await ask(model, i_max=0, sufficiency="answer", stated_check=False)
    assert model.calls == ["draft", "check"] and answer.status == "abstained" and not answer.citations
    assert answer.stats["failure"] == "grd"


@pytest.mark.parametrize(("rewritten", "question", "ours"), [
    ("In which town is Acme Corp based?", "Where is the company that Alice Stone founded based?", False),
    ("Where is Acme headquartered?", "Where is the company that Alice Stone founded based?", False),
    ("Who is Barack Obama's wife?", "Who is the spouse of the 44th US president?", False),
    ("What is the full name of the company Alice Stone founded?", "Where is the company that Alice Stone founded "
     "based?", False),
    ("What entity and relation must be found in the sources to answer this question?",  # as Qwen wrote it
     "When did the state where Pocahontas Mounds is located become part of the United States?", True),
    ("What entity and relation must be found in the sources to answer this question?",  # "found" is the question's
     "Where is the company that Alice Stone founded based?", True),
])
def test_a_rewrite_about_our_instructions_is_no_rewrite(rewritten: str, question: str, ours: bool) -> None:
    assert asks_about_instructions(rewritten, question) is ours


CONNECTING = "Is the company that Alice Stone founded based in the town where Carol Diaz was born?"


async def test_stage_one_leaving_the_seeds_apart_escalates_without_a_judgement(ask) -> None:  # noqa: ANN001
    """§III-C.2: bridge discovery is for when stage 1 "fails to connect multiple query entities". Alice
    Stone's and Carol Diaz's facts meet only through Acme Corp's passage (c2), which stage 1 does not hold:
    no draft at stage 1; the bridge stage finds it, and its draft is verified there."""
    model = Model()
    answer = await ask(model, question=CONNECTING, i_max=0)
    (local,) = [s for s in answer.trace if s.action == "sufficiency.local"]
    assert local.inputs == {"check": "connects_seeds"} and local.outputs["sufficient"] is False
    assert {"Alice Stone", "Carol Diaz"} <= set(local.outputs["seeds_apart"])
    drafts = [s.inputs["stage"] for s in answer.trace if s.action == "a2rag.answer"]
    assert drafts == ["bridge"] and model.calls == ["draft", "check"]
    assert answer.status == "answered" and answer.text == "Rivertown" and answer.stats["stage"] == "bridge"


async def test_without_the_connection_condition_stage_one_is_judged(ask) -> None:  # noqa: ANN001
    model = Model()
    answer = await ask(model, question=CONNECTING, i_max=0, local_connects_seeds=False)
    drafts = [s.inputs["stage"] for s in answer.trace if s.action == "a2rag.answer"]
    assert drafts[0] == "local" and not any(s.inputs.get("check") == "connects_seeds" for s in answer.trace)


async def test_a_draft_of_a_kind_the_question_cannot_want_fails_without_a_verdict(ask) -> None:  # noqa: ANN001
    """A bare year for "where", left so by the reader's second look, is no answer: Triple-Check fails it
    as "ans" without a call, at every stage (each escalates), and the question is abstained on."""
    model = Model(fact="Alice Stone founded Acme Corp", answer="1990")
    answer = await ask(model, i_max=0)
    assert "check" not in model.calls and answer.status == "abstained" and answer.stats["failure"] == "ans"
    assert '"1990" is not the person, place or thing' in answer.message
    rejected = [s for s in answer.trace if s.action.startswith("sufficiency.")]
    assert rejected and all(s.outputs["failure"] == "ans" for s in rejected if "failure" in s.outputs)


async def test_a_draft_stating_a_number_no_passage_states_fails_grounding_without_a_verdict(ask) -> None:  # noqa: ANN001
    """A made-up number, left so by the reader's second look, is not grounded: Triple-Check fails it as
    "grd" without a call."""
    model = Model(fact="Alice Stone founded Acme Corp", answer="4,200")
    answer = await ask(model, question="How many people work at the company Alice Stone founded?", i_max=0)
    assert "check" not in model.calls and answer.status == "abstained" and answer.stats["failure"] == "grd"
    assert "number 4,200 is stated in none of the passages" in answer.message
    drafts = [s for s in answer.trace if s.action.startswith("a2rag.answer")]
    assert drafts and model.calls.count("draft") == 2 * len(drafts)  # each draft took its second look


class StopsAtTheBridge(Model):
    """Names the bridge in its reasoning but answers only when the question names it; never rewrites."""

    def draft(self, prompt: str) -> str:
        found = re.search(r"\[(\d+)\] [^\n]*" + BRIDGE, prompt)
        if found and "(Acme Corp)" in prompt.rsplit("Question:", 1)[-1]:
            n = found.group(1)
            return f"Reasoning: Acme Corp is based in Rivertown [{n}].\nAnswer: Rivertown [{n}]"
        return "Reasoning: Alice Stone founded Acme Corp in 1990 [1].\nAnswer: Unknown"

    @staticmethod
    def rewrite(prompt: str) -> str:
        return QUESTION


async def test_a_rewrite_the_model_cannot_write_names_what_the_drafts_reasoning_reached(ask) -> None:  # noqa: ANN001
    model = StopsAtTheBridge()
    answer = await ask(model, i_max=1)
    (step,) = [s for s in answer.trace if s.action == "rewrite.ans.from_draft"]
    assert step.outputs["query"] == QUESTION + " (Acme Corp)"  # not Alice Stone (asked), nor 1990 (a value)
    assert answer.status == "answered" and answer.text == "Rivertown" and answer.stats["attempts"] == 2
    assert model.calls.count("rewrite") == 2  # the model was asked, and asked again, first
    off = await ask(StopsAtTheBridge(), i_max=1, rewrite_from_draft=False)
    assert off.status == "abstained" and "the rewrite asked nothing new" in off.message


class RewritesWithoutTheBridge(StopsAtTheBridge):
    """Rewrites into a new question that names only the entity the question already names."""

    @staticmethod
    def rewrite(prompt: str) -> str:
        return "Where is the firm founded by Alice Stone located?"


async def test_a_rewrite_naming_no_new_entity_gets_the_names_the_draft_reached(ask) -> None:  # noqa: ANN001
    """A rewrite whose only entity is the question's own seeds the same neighbourhood again: the names the
    rejected draft's reasoning reached are added to it."""
    answer = await ask(RewritesWithoutTheBridge(), i_max=1)
    (step,) = [s for s in answer.trace if s.action == "rewrite.ans.from_draft"]
    assert step.outputs["query"] == "Where is the firm founded by Alice Stone located? (Acme Corp)"
    assert answer.status == "answered" and answer.text == "Rivertown" and answer.stats["attempts"] == 2


async def test_a_rewrite_naming_a_new_entity_stands_as_written(ask) -> None:  # noqa: ANN001
    model = Model(fact="Alice Stone founded Acme Corp", answer="Unknown")  # rewrites "In which town is Acme Corp ..."
    answer = await ask(model, i_max=1)
    rewrites = [s.outputs["query"] for s in answer.trace if s.action.startswith("rewrite.")]
    assert rewrites == ["In which town is Acme Corp based?"]


def test_names_new_reads_entities_not_values() -> None:
    assert names_new("In which town is Acme Corp based?", QUESTION)
    assert not names_new("Where is the firm founded by Alice Stone located in 2020?", QUESTION)


async def test_an_answer_of_a_kind_the_users_question_cannot_want_fails_after_a_rewrite(open_bridge) -> None:  # noqa: ANN001
    """The rewrite dropped what the question asks for ("Which town ...?" for how many people live there):
    the draft answers the rewrite with a name, which Triple-Check refuses against the user's question
    without a verdict, so the question is abstained on rather than answered with the town."""
    model = Model(fact=BRIDGE, answer="Rivertown", check=verdict("ok", relevant=True, grounded=True, resolves=True))
    model.rewrite = lambda prompt: "Which town is Acme Corp based in?"  # type: ignore[method-assign]
    question = "How many people live in the town where the company that Alice Stone founded is based?"
    answer = await open_bridge(model.backend).aask(question, method="a2rag", i_max=1)
    assert answer.status == "abstained" and answer.text is None
    assert '"Rivertown" is not the number it asks for' in answer.message
    rejected = [s.outputs for s in answer.trace if s.action.startswith("sufficiency.")]
    assert rejected and all(o["failure"] == "ans" for o in rejected if o.get("failure"))


async def test_every_call_is_counted_on_the_trace_step_that_made_it(ask) -> None:  # noqa: ANN001
    model = StopsAtTheBridge()
    answer = await ask(model, i_max=1)
    assert answer.cost.calls == len(model.calls) and answer.cost.calls > 4
    assert sum(s.cost.calls for s in answer.trace) == answer.cost.calls
    calling = [s for s in answer.trace if s.action in ("a2rag.answer", "check", "rewrite.ans", "rewrite.ans.again")]
    assert {s.action for s in calling} == {"a2rag.answer", "check", "rewrite.ans", "rewrite.ans.again"}
    assert all(s.cost.calls >= 1 for s in calling)


async def test_a_number_the_question_names_is_grounded_by_the_question(ask) -> None:  # noqa: ANN001
    model = Model(fact="Alice Stone founded Acme Corp", answer="Acme Corp (before 2000)",
                  check=verdict("stated", relevant=True, grounded=True, resolves=True))
    answer = await ask(model, question="Which company did Alice Stone found before 2000?", i_max=0)
    assert "check" in model.calls and answer.status == "answered"  # checked by the verdict, not refused


async def test_a_cut_draft_that_only_repeats_the_question_fails_without_a_verdict(open_bridge) -> None:  # noqa: ANN001
    """A cut draft skips the reader's second look; a restating answer ("Alice Stone" for which company she
    founded: Gemma 3 270M's "The Harbor Hill Observatory" for who founded it) is refused without a verdict."""
    model = Model(fact="Alice Stone founded Acme Corp", answer="Alice Stone")
    tg = open_bridge(CutDrafts(model))
    answer = await tg.aask("Which company did Alice Stone found?", method="a2rag", i_max=0)
    assert "check" not in model.calls and answer.status == "abstained" and answer.stats["failure"] == "ans"
    assert '"Alice Stone" only repeats words of the question' in answer.message
