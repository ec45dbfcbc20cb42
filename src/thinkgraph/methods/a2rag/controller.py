"""The adaptive control loop (Alg. 1): gate, answer, Triple-Check, failure-aware rewrite (rewrite.py), bounded retry."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from thinkgraph.errors import CallBudgetReached
from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.llm.service import LLM, Message
from thinkgraph.methods.a2rag.config import A2RAGConfig
from thinkgraph.methods.a2rag.hitl import propose_triples
from thinkgraph.methods.a2rag.prompts import ANSWER
from thinkgraph.methods.a2rag.retriever import AgenticRetriever, Judge, RetrievalState
from thinkgraph.methods.a2rag.rewrite import reached_names, rewrite_query, with_draft_names
from thinkgraph.methods.a2rag.verify import Verifier
from thinkgraph.methods.answer_shape import kind_mismatch, read_numbers, stated_in, unstated_number
from thinkgraph.methods.base import NO_LLM_MESSAGE, OUT_OF_SCOPE, MethodContext
from thinkgraph.methods.layout import PREAMBLE, evidence_block
from thinkgraph.methods.none import NoRetrievalMethod
from thinkgraph.methods.reader import ANSWER_PROMPT, reader_prompt
from thinkgraph.methods.replies import (
    ECHO_MESSAGE,
    AnswerReply,
    answer_format,
    ask_answer,
    has_answer_line,
    read_answer,
    shortened,
)
from thinkgraph.methods.restatement import restates_question
from thinkgraph.methods.synthesis import citations_for, numbered_passages
from thinkgraph.models import Answer, AnswerStatus, Cost, EvidenceSubgraph, Node, NodeType, TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage

DRAFT_STEP = "a2rag.answer"


def no_llm_variant(config: A2RAGConfig) -> str:
    """What runs without an LLM, as evaluation reports name it."""
    seeds = "linked question entities" if config.retrieval == "shared" else "phrase seeds by the hybrid matcher"
    stages = "local, bridge and PPR stages all run" if config.local_bridge else "stage 3 alone"
    stage3 = "degree-normalised PPR with map-back" if config.stage3 == "paper" else "the shared walk from the seeds"
    order = {"stage": "the last stage's chunks first, each stage by its own scores",
             "interleaved": "the stages' chunks interleaved, each stage by its own scores",
             "shared_walk": "chunks sorted by the shared walk"}[config.evidence_order]
    return (f"no LLM, retrieval={config.retrieval}: {seeds}; {stages}, stage 3 {stage3} (stage3={config.stage3}); "
            f"{order} (no sufficiency judgement, no Triple-Check)")


# A draft's readings that are candidate answers: a reply the completion cap cut keeps its answer line
# (a weak model, Gemma 3 270M, wrote "Answer: X" and then ran on to the cap) and is checked like any.
CANDIDATE = (AnswerStatus.ANSWERED, AnswerStatus.TRUNCATED)


@dataclass
class Attempt:
    query: str
    answer: str
    failure: str | None
    reason: str
    stage: str
    evidence: EvidenceSubgraph = field(default_factory=EvidenceSubgraph)
    state: RetrievalState | None = None


@dataclass
class A2RAGMethod:
    ctx: MethodContext
    config: A2RAGConfig = field(default_factory=A2RAGConfig)
    name: str = "a2rag"
    stage_counts: Counter[str] = field(default_factory=Counter)  # Fig. 4: where questions ended
    seed_failures: int = 0  # seed extractions whose reply was unusable (the model-free extractor stood in)
    # drafts the completion cap cut: read as truncated, not as answers
    _cut_replies: set[str] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self.retriever = AgenticRetriever(self.ctx.view, self.config, self.ctx.llm,
                                          walk_settings=self.ctx.settings.retrieval)
        self.verifier = Verifier(self.ctx.llm, joint=self.config.triple_check == "joint",
                                 check_threshold=self.config.check_threshold,
                                 sufficiency_threshold=self.config.sufficiency_threshold) \
            if self.ctx.llm is not None else None

    @property
    def _template(self) -> tuple[str, ...]:
        """The answer step's instructions (what an echoing reply repeats): the shared layout's preamble
        too, which a weak model copies as readily (Gemma 3 270M did)."""
        return (ANSWER_PROMPT, PREAMBLE) if self.config.reader == "shared" else (ANSWER,)

    def _read(self, reply: str, passages: list[ScoredPassage], query: str) -> AnswerReply[ScoredPassage]:
        """A draft as read, a reply the completion cap cut read as truncated (a candidate only when it
        labelled its answer line before the cut: ``CANDIDATE``), a sentence restating the query as its
        short answer (``replies.shortened``)."""
        read = shortened(read_answer(reply, passages, self._template, truncated=reply in self._cut_replies,
                                     cap=self.ctx.llm.settings.max_tokens.answer if self.ctx.llm else None), query)
        if read.status == AnswerStatus.TRUNCATED and not has_answer_line(reply):
            return replace(read, text=None)  # cut before it stated an answer: nothing to check
        return read

    @property
    def unusable_verdicts(self) -> int:
        """Triple-Check replies that stayed unparseable after the repairs."""
        return self.verifier.unusable if self.verifier is not None else 0

    # gate -------------------------------------------------------------------------
    def gate_score(self, question: str) -> float:
        summaries = self.ctx.view.vectors(NodeType.DOCUMENT)
        if not len(summaries):
            return 1.0  # an index without summaries cannot gate; let retrieval decide
        return float(np.clip(summaries.scores(self.ctx.view.embed_query(question)).max(), 0.0, 1.0))

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:
            return await self._evidence_only(question)
        return await self._controlled(question, llm)

    async def _evidence_only(self, question: str) -> Answer:
        """Without an LLM: the gate (it needs only embeddings), then every stage, no verification."""
        trace = self.ctx.trace
        if self.config.gate:
            score = self.gate_score(question)
            trace.append(TraceStep("controller", "gate", {"tau_g": self.config.tau_g}, {"score": score}))
            if score < self.config.tau_g:
                self.stage_counts["abstained"] += 1
                return Answer(question=question, method=self.name, text=None, status=AnswerStatus.ABSTAINED,
                              trace=trace, message=f"out of scope: best summary similarity {score:.3f} < tau_g "
                                      f"{self.config.tau_g}", stats={"stage": "abstained", "outcome": OUT_OF_SCOPE})
        state = await self.retriever.retrieve(question, trace=trace)
        self.stage_counts[state.stage] += 1
        chunks = state.ranked_chunks()[: self.config.evidence_chunks]
        return Answer(question=question, method=self.name, text=None, status=AnswerStatus.EVIDENCE_ONLY,
                      citations=citations_for(self.retriever.passages(chunks)),
                      evidence=self._subgraph(state), trace=trace, message=NO_LLM_MESSAGE,
                      stats={"stage": state.stage, "variant": no_llm_variant(self.config)})

    async def _controlled(self, question: str, llm: LLM) -> Answer:
        c = self.config
        trace = self.ctx.trace
        if c.gate:
            score = self.gate_score(question)
            trace.append(TraceStep("controller", "gate", {"tau_g": c.tau_g}, {"score": score}))
            if score < c.tau_g:
                return await self._out_of_scope(question, score, trace)
        attempts: list[Attempt] = []
        try:
            with llm.meter.limit(c.max_calls):
                answer = await self._attempts(question, llm, attempts, trace)
        except CallBudgetReached:
            trace.append(TraceStep("controller", "budget_reached", {"max_calls": c.max_calls}, {}))
            return self._abstain(question, attempts, trace, budget_reached=True)
        return answer or self._abstain(question, attempts, trace, budget_reached=False)

    async def _out_of_scope(self, question: str, score: float, trace: list[TraceStep]) -> Answer:
        c = self.config
        self.stage_counts["abstained"] += 1
        if c.out_of_scope == "no_retrieval":
            fallback = await NoRetrievalMethod(self.ctx).answer(question)  # records on the same trace
            fallback.method = self.name
            fallback.stats = {"stage": "abstained"}
            return fallback
        return Answer(question=question, method=self.name, text=None, status=AnswerStatus.ABSTAINED, trace=trace,
                      message=f"out of scope: best summary similarity {score:.3f} < tau_g {c.tau_g}",
                      stats={"stage": "abstained", "outcome": OUT_OF_SCOPE})

    async def _attempts(self, question: str, llm: LLM, attempts: list[Attempt],
                        trace: list[TraceStep]) -> Answer | None:
        """Alg. 1 lines 6-20: retrieve, answer, Triple-Check; on failure a type-conditioned rewrite and
        another try, at most I_max retries. The verified answer, or None when none passed."""
        c = self.config
        assert self.verifier is not None  # (an LLM is set)
        query = question
        for attempt in range(c.i_max + 1):
            # the paper's separate check runs after every stage; a draft is asked again only on new evidence
            state = await self.retriever.retrieve(query, judge=self._judge(llm, trace, question), trace=trace,
                                                  judge_unchanged=c.sufficiency == "llm")
            self.seed_failures += state.seeds.extraction_error is not None
            passages = self.retriever.passages(state.ranked_chunks()[: c.evidence_chunks])
            if state.draft is not None:  # the draft that judged its stage sufficient is the candidate
                reply = state.draft
            else:
                reply, cost = await self._generate(llm, query, state, passages)
                trace.append(TraceStep("responder", DRAFT_STEP, {"query": query, "stage": state.stage},
                                       {"reply": reply}, cost=cost))
            failure, reason = (None, "") if state.draft_checked else await self._check(query, reply, state, trace,
                                                                                      question=question)
            attempts.append(Attempt(query, reply, failure, reason, state.stage, self._subgraph(state), state))
            if failure is None:
                return await self._verified(question, llm, reply, state, passages, attempts, trace)
            if attempt == c.i_max or not c.rewrite:
                break  # Alg. 1 rewrites here too, but no retry is left to use the rewrite (or rewrite is off)
            evidence = self.retriever.evidence_text(state)
            with llm.meter.scope() as cost:
                rewrite = await rewrite_query(llm, query, reply, evidence, failure, reason)
            trace.append(TraceStep("controller", f"rewrite.{failure}", {"reason": reason},
                                   {"query": rewrite.query or query}, cost=cost))
            if rewrite.query is None:  # no new question: asked again once, told why
                with llm.meter.scope() as cost:
                    rewrite = await rewrite_query(llm, query, reply, evidence, failure, reason, again=rewrite)
                trace.append(TraceStep("controller", f"rewrite.{failure}.again", {"reason": rewrite.why or "-"},
                                       {"query": rewrite.query or query}, cost=cost))
            if c.rewrite_from_draft:
                named = with_draft_names(query, rewrite.query, reply, self._read(reply, passages, query).text)
                if named is not None:
                    rewrite = replace(rewrite, query=named)
                    trace.append(TraceStep("controller", f"rewrite.{failure}.from_draft", {}, {"query": named}))
            if rewrite.query is None:
                break  # the same query again would retrieve and fail the same way: no retry is worth its calls
            query = rewrite.query
        return None

    async def _check(self, query: str, reply: str, state: RetrievalState, trace: list[TraceStep], *,
                     question: str | None = None) -> tuple[str | None, str]:
        """Triple-Check of the candidate as read (its answer, not its reasoning or markers) against the
        passages it cites (None: passed); an echo of the prompt or a draft that states no answer fails
        without a call, and so does an answer that only repeats the question's words
        (``restatement.restates_question``; Gemma 3 270M's cut draft "The Harbor Hill Observatory" for who
        founded it passed the verdict), one the reader's second look left of a kind the question cannot
        want (a bare date for "where", ``answer_shape.kind_mismatch``), or one whose number or words (with
        ``stated_check``) nothing shown states (``unstated_number``, ``stated_in``, as "grd").
        ``triple_check="off"`` (the ablation) passes it."""
        assert self.verifier is not None  # (an LLM is set)
        if any(echoes_instructions(reply, t) for t in self._template):
            return "ans", ECHO_MESSAGE
        if self.config.triple_check == "off":
            return None, ""
        passages = self.retriever.passages(state.ranked_chunks()[: self.config.evidence_chunks])
        read = self._read(reply, passages, query)
        if read.status not in CANDIDATE or not read.text:
            why = read.message or ("it abstained" if read.status == AnswerStatus.ABSTAINED else "its answer is empty")
            return "ans", f"the draft states no answer: {why}"
        if restates_question(read.text, query):  # (a cut draft skipped the second look that asks again)
            return "ans", f"the answer \"{read.text}\" only repeats words of the question"
        # (the user's question too: a rewrite that dropped what it asks for, "What was the city where ...?" for
        # its population, is answered with a name the question cannot want)
        wanted = kind_mismatch(read.text, query) or (kind_mismatch(read.text, question) if question else None)
        if wanted is not None:  # left so by the reader's second look: no verdict can make it an answer
            return "ans", f"the answer \"{read.text}\" is not {wanted}"
        # the passages, every fact gathered and the query, read only for an answer with a number: the
        # evidence text ranks facts by embedding them, which a check need not pay for
        number = unstated_number(read.text, "\n".join([*(p.text for p in passages), *self.retriever.triples_text(
            state.facts, limit=None), query])) if read_numbers(read.text) else None
        if number is not None:  # (as above): a number neither the passages nor the question state is not grounded
            return "grd", f"the answer's number {number} is stated in none of the passages"
        # what the draft was shown: its passages with their titles, the facts its prompt listed (not every
        # fact gathered: on a co-occurrence index those name hundreds of entities), the query
        shown = [*(f"{p.title}: {p.text}" for p in passages), *state.shown_facts, query]
        if self.config.stated_check and not stated_in(read.text, shown):
            return "grd", f"the answer \"{read.text}\" is stated in none of the passages, facts or the question"
        evidence = evidence_block(numbered_passages(read.cited))
        return await self.verifier.triple_check(query, read.text, evidence, trace)

    async def _verified(self, question: str, llm: LLM, reply: str, state: RetrievalState,
                        passages: list[ScoredPassage],
                        attempts: list[Attempt], trace: list[TraceStep]) -> Answer:
        self.stage_counts[state.stage] += 1
        read = self._read(reply, passages, attempts[-1].query)  # as Triple-Check read it
        text, used = read.text, read.cited
        checked = self.config.triple_check != "off"
        status, message = AnswerStatus.ANSWERED, None
        if not checked and read.status not in CANDIDATE:  # unverified "Unknown" (the ablation)
            status, text = AnswerStatus.ABSTAINED, None
        elif read.status == AnswerStatus.TRUNCATED:  # verified, and said to be cut as every method says it
            status, message = AnswerStatus.TRUNCATED, read.message
        elif self.config.hitl and checked:  # (§III-B.4: after a verified answer)
            proposals = await propose_triples(self.ctx.store, llm, question, reply, passages)
            trace.append(TraceStep("controller", "hitl.propose", {}, {"proposals": proposals}))
        return Answer(question=question, method=self.name, text=text, status=status, message=message,
                      citations=citations_for(used), evidence=self._verified_evidence(attempts), trace=trace,
                      stats={"stage": state.stage, "attempts": len(attempts),
                             "outcome": "verified" if checked else "unchecked", **self._seed_stats(trace)})

    def _abstain(self, question: str, attempts: list[Attempt], trace: list[TraceStep], *,
                 budget_reached: bool) -> Answer:
        """Alg. 1 line 21: no verified answer within the budget, so none is given (verified-or-abstain).
        The last unverified draft stays in the trace only; what was retrieved stays the evidence."""
        self.stage_counts["failed"] += 1
        last = attempts[-1] if attempts else None
        if budget_reached:
            outcome, why = "budget_reached", f"stopped at the call budget (max_calls={self.config.max_calls})"
        elif not self.config.rewrite and len(attempts) <= self.config.i_max:
            outcome, why = "rewrite_off", "rewrite is off (the ablation), so a retry would fail the same way"
        elif len(attempts) <= self.config.i_max:  # the loop ended on a rewrite that was no new question
            outcome, why = "rewrite_unchanged", "the rewrite asked nothing new, so no retry was worth its calls"
        else:
            outcome, why = "retries_exhausted", f"retry budget spent (i_max={self.config.i_max})"
        message = f"abstained: no answer passed Triple-Check in {len(attempts)} attempt(s); {why}"
        if last is not None and last.failure:
            message += f" (last failure: {last.failure}: {last.reason})"
        trace.append(TraceStep("controller", "abstain", {"attempts": len(attempts)},
                               {"unverified_draft": last.answer if last else None,
                                "failure": last.failure if last else None}))
        # the evidence shown is the question's own retrieval (the first attempt) as it ran, up to the stage
        # it stopped at, not a rewrite's: a weak model's rewrite can drift anywhere
        first = attempts[0].state if attempts else None
        evidence = self._subgraph(first) if first is not None else EvidenceSubgraph()
        return Answer(question=question, method=self.name, text=None, status=AnswerStatus.ABSTAINED, trace=trace,
                      message=message, evidence=evidence,
                      stats={"stage": "failed", "attempts": len(attempts),
                             "outcome": outcome,
                             "failure": (last.failure or "") if last else "", **self._seed_stats(trace)})

    @staticmethod
    def _seed_stats(trace: list[TraceStep]) -> dict[str, int]:
        failed = sum(s.action == "seeds.extraction_failed" for s in trace)
        return {"seed_extraction_failures": failed} if failed else {}

    def _judge(self, llm: LLM, trace: list[TraceStep], question: str | None = None) -> Judge | None:
        """The sufficiency judgement after each stage (config ``sufficiency``)."""
        mode = self.config.sufficiency
        if mode == "all":
            return None
        verifier = self.verifier
        assert verifier is not None

        async def verdict(state: RetrievalState) -> bool:
            return await verifier.sufficient(state.query, self.retriever.evidence_text(state), state.stage, trace)

        async def draft(state: RetrievalState) -> bool:
            """A draft answer from the evidence the stage hands on (its own chunks first); "Unknown" (or
            an echoed prompt) escalates. With the pre-check (``sufficiency_precheck`` > 0, off by
            default) a stage whose evidence lacks the walk's best passages escalates without a draft."""
            missing = self._misses_the_walks_best(state)
            if missing:
                trace.append(TraceStep("retriever", f"sufficiency.{state.stage}", {"precheck": "walk"},
                                       {"sufficient": False, "missing_best_passages": missing}))
                return False
            passages = self.retriever.passages(state.ranked_chunks()[: self.config.evidence_chunks])
            reply, cost = await self._generate(llm, state.query, state, passages)
            read = self._read(reply, passages, state.query)
            sufficient = read.status in CANDIDATE and bool(read.text)
            if read.status == AnswerStatus.ABSTAINED:  # where it stopped on the way (seeds_from_draft)
                state.reached = reached_names(state.query, reply, None)
            trace.append(TraceStep("responder", DRAFT_STEP, {"query": state.query, "stage": state.stage},
                                   {"reply": reply, "sufficient": sufficient}, cost=cost))
            state.draft = reply if sufficient else None
            return sufficient

        async def verified_draft(state: RetrievalState) -> bool:
            """The stage's draft, then Triple-Check on the evidence it was drafted from: a rejected draft
            escalates (the verdict is traced as the stage's sufficiency), a verified one is the answer."""
            if not await draft(state):
                return False
            assert state.draft is not None
            failure, reason = await self._check(state.query, state.draft, state, trace, question=question)
            trace.append(TraceStep("retriever", f"sufficiency.{state.stage}", {"check": "triple_check"},
                                   {"sufficient": failure is None, "failure": failure, "reason": reason}))
            state.draft_checked = failure is None
            if failure is not None:
                state.draft = None
            return failure is None

        return {"llm": verdict, "verified": verified_draft}.get(mode, draft)

    def _misses_the_walks_best(self, state: RetrievalState) -> list[str]:
        """The shared walk's ``sufficiency_precheck`` best passages that the stage's evidence lacks."""
        n = self.config.sufficiency_precheck
        if state.walk is None or n == 0:
            return []
        best = state.walk.best(n)
        shown = set(state.ranked_chunks()[: self.config.evidence_chunks])
        return [c for c in best if c not in shown]

    async def _generate(self, llm: LLM, query: str, state: RetrievalState,
                        passages: list[ScoredPassage]) -> tuple[str, Cost]:
        """A draft answer from the stage's passages and facts (the reply as written; the marker-only
        repair of ``ask_answer`` included): the one reader's prompt, or the paper's ANSWER template."""
        facts = self.retriever.triples_text(self.retriever.prompt_facts(state))
        state.shown_facts = facts  # kept for the draft's Triple-Check (stated_check), not ranked again there
        if self.config.reader == "shared":
            notes = self.retriever.notes(state, passages, facts)
            messages: list[Message] = [{"role": "user", "content": reader_prompt(query, passages, notes)}]
        else:
            prompt = ANSWER.format(question=query, triples="\n".join(facts) or "(none)",
                                   passages=numbered_passages(passages, sep="\n") or "(none)",
                                   answer_format=answer_format(question=query))
            messages = [{"role": "user", "content": prompt}]
        asked = await ask_answer(llm, messages, passages, step=DRAFT_STEP, prompt_template=self._template,
                                 question=query if self.config.reader == "shared" else None)
        if asked.read.status == AnswerStatus.TRUNCATED:
            self._cut_replies.add(asked.replies[-1])
        return asked.replies[-1], asked.cost

    def _verified_evidence(self, attempts: list[Attempt]) -> EvidenceSubgraph:
        """The evidence of an answer verified after a rewrite: the rewrite's retrieval the answer rests on
        first (its citations are among it), then the question's own retrieval as it ran (up to the stage
        it stopped at); a weak model's rewrite may drift, and what was found for the question stays shown."""
        if len(attempts) == 1 or attempts[0].state is None:
            return attempts[-1].evidence
        shown = attempts[-1].evidence
        seen = {n.id for n in shown.nodes}
        own = self._subgraph(attempts[0].state)
        return replace(shown, nodes=shown.nodes + [n for n in own.nodes if n.id not in seen])

    def _subgraph(self, state: RetrievalState) -> EvidenceSubgraph:
        """What the retriever gathered: the passages handed to the answerer, the seed and fact
        entities, and the facts."""
        g = self.retriever.graph
        rows = sorted({r for f in state.facts for r in (f.subject, f.object)} | set(state.seeds.entities))
        passages = self.retriever.passages(state.ranked_chunks()[: self.config.evidence_chunks])
        nodes = [Node(p.chunk_id, NodeType.CHUNK, p.text, {"doc_id": p.doc_id}) for p in passages]
        nodes += [Node(g.ids[r], "entity", g.names[r], {"seed": r in state.seeds.entities}) for r in rows]
        shown = state.facts[: self.config.max_triples]
        return EvidenceSubgraph(nodes=nodes, path_texts=self.retriever.triples_text(state.facts),
                                paths=[[g.ids[f.subject], g.ids[f.object]] for f in shown])
