"""ToPG's Naive and Local modes (ToPG §2.3.1-2.3.2, Alg. 1) as a method returning an Answer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from pydantic import BaseModel, Field

from thinkgraph.errors import CallBudgetReached, ConfigError, LLMUnavailableError, StructuredOutputError
from thinkgraph.llm.service import LLM
from thinkgraph.methods.base import NO_LLM_MESSAGE, MethodContext
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.global_mode import CommunityReporter, GlobalExplorer
from thinkgraph.methods.topg.graph import PropositionGraph, build_proposition_graph
from thinkgraph.methods.topg.prompts import EVAL, NAIVE_ANSWER, NEXT_QUESTIONS, SELECT
from thinkgraph.methods.topg.suggest import Suggester
from thinkgraph.models import Answer, AnswerStatus, EvidenceSubgraph, Node, TraceStep
from thinkgraph.retrieval.evidence import passages_from_scores
from thinkgraph.retrieval.hybrid import blend_with_passages

_CITE = re.compile(r"\[(\d+)\]")
MAX_CITED_PASSAGES = 20  # global answers rest on hundreds of facts; cite the passages of the first ones


class SelectReply(BaseModel):
    keep: list[int] = Field(default_factory=list)


class EvalReply(BaseModel):
    answerable: bool
    answer: str = ""
    facts: list[int] = Field(default_factory=list)


class NextQuestions(BaseModel):
    questions: list[str] = Field(default_factory=list)


EVIDENCE_SEEDS = 5  # propositions that seed the LLM-free walk (session 1's Suggest benchmark setting)
# What runs without an LLM, per mode, as evaluation reports name it.
NO_LLM_VARIANTS = {
    "naive": "no LLM: SuggestNaive only (top-k propositions by cosine)",
    "local": f"no LLM: Suggest-local walk from SuggestNaive's best {EVIDENCE_SEEDS}, every suggestion kept "
             "(no Select, Eval or NextQ)",
    "global": "no LLM: Alg. 2 anchors from the question alone, every suggestion kept (no decomposition or "
              "Select), communities chosen (no intermediate answers, no report)",
}


@dataclass
class ToPGMethod:
    ctx: MethodContext
    config: ToPGConfig = field(default_factory=ToPGConfig)
    name: str = "topg"
    graph: PropositionGraph | None = None

    @cached_property
    def suggester(self) -> Suggester:
        graph = self.graph or build_proposition_graph(self.ctx.view)
        if graph.n == 0:
            raise ConfigError("topg needs propositions or triplets in the index; build it with "
                              "--extractor propositions, llm or import (the model-free extractor makes neither)")
        return Suggester(graph, self.config)

    def _facts(self, props: list[int]) -> str:
        return "\n".join(f"[{i}] {self.suggester.graph.texts[p]}" for i, p in enumerate(props, 1))

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:
            return await self._without_llm(question)
        run = {"naive": self._naive, "local": self._local, "global": self._global}[self.config.mode]
        return await run(question, llm)

    async def _without_llm(self, question: str) -> Answer:
        """The retrieval each mode can do without Select, Eval or any prompt, named in the stats."""
        if self.config.mode == "global":
            props, trace = await self._global_anchors_only(question)
        else:
            props, trace = self._suggest_only(question)
        # the walk's passages blended with the hybrid passage ranking (never worse than dense)
        chunks = blend_with_passages(self.ctx.view, question, self.suggester.passages_of(props),
                                     weight=self.ctx.settings.retrieval.evidence_blend, depth=MAX_CITED_PASSAGES)
        answer = self._answer(question, None, AnswerStatus.EVIDENCE_ONLY, props, trace, chunks=chunks)
        answer.stats["variant"] = NO_LLM_VARIANTS[self.config.mode]
        answer.message = NO_LLM_MESSAGE
        return answer

    async def _global_anchors_only(self, question: str) -> tuple[list[int], list[TraceStep]]:
        """Alg. 2 without an LLM: the question alone seeds (no decomposition), every suggestion is kept
        (no Select, so Rocchio has no pruned set), then Alg. 3 picks the communities a report would
        read; the anchors, in the order collected, are the evidence."""
        trace = self.ctx.trace

        async def keep_all(query: str, suggested: list[int]) -> list[int]:
            return suggested

        explorer = GlobalExplorer(self.suggester, self.config, None, keep_all, self.ctx.view.embed_query, trace)
        anchors = await explorer.collect_anchors(question)
        CommunityReporter(self.suggester, self.config, self.ctx.store, trace).choose(anchors)
        return anchors, trace

    def _suggest_only(self, question: str) -> tuple[list[int], list[TraceStep]]:
        """Without an LLM there is no Select: mode naive shows SuggestNaive's propositions; local and
        global show the query-aware walk, Suggest-local iterated ``max_iter`` times from naive's
        best ``EVIDENCE_SEEDS`` propositions with every suggestion kept."""
        vec = self.ctx.view.embed_query(question)
        naive = self.suggester.naive(vec)
        trace = self.ctx.trace
        trace.append(TraceStep("suggester", "suggest.naive", {"k": self.config.k}, {"propositions": len(naive)}))
        if self.config.mode == "naive":
            return naive, trace
        pool = naive[:EVIDENCE_SEEDS]
        for iteration in range(self.config.max_iter):
            new = [p for p in self.suggester.local(vec, pool) if p not in pool]
            pool += new
            trace.append(TraceStep("suggester", "suggest.local", {"iteration": iteration + 1}, {"new": len(new)}))
        return pool, trace

    def _answer(self, question: str, text: str | None, status: AnswerStatus, props: list[int],
                trace: list[TraceStep], message: str | None = None, *, budget_reached: bool = False,
                chunks: list[str] | None = None) -> Answer:
        g = self.suggester.graph
        chunks = (self.suggester.passages_of(props) if chunks is None else chunks)[:MAX_CITED_PASSAGES]
        passages = passages_from_scores(self.ctx.store, [(c, 0.0) for c in chunks])
        nodes = [Node(g.ids[p], "proposition", g.texts[p]) for p in props]
        return Answer(question=question, method=self.name, text=text, status=status,
                      citations=citations_for(passages), evidence=EvidenceSubgraph(nodes=nodes),
                      trace=trace, message=message,
                      stats={"mode": self.config.mode, "facts": len(props),
                             **({"outcome": "budget_reached"} if budget_reached else {})})

    async def _naive(self, question: str, llm: LLM) -> Answer:
        """Naive: SuggestNaive's propositions answer the question directly, without Select."""
        props = self.suggester.naive(self.ctx.view.embed_query(question))
        prompt = NAIVE_ANSWER.format(question=question, facts=self._facts(props))
        reply = (await llm.text([{"role": "user", "content": prompt}], step="topg.naive_answer", kind="answer")).strip()
        trace = self.ctx.trace
        trace.append(TraceStep("suggester", "suggest.naive", {"k": self.config.k}, {"propositions": len(props)}))
        trace.append(TraceStep("responder", "topg.naive_answer", {}, {"reply": reply}))
        cited = [props[int(n) - 1] for n in _CITE.findall(reply) if 1 <= int(n) <= len(props)]
        text = _CITE.sub("", reply).strip()
        status = AnswerStatus.ABSTAINED if text.strip(".").casefold() == "unknown" else AnswerStatus.ANSWERED
        return self._answer(question, text, status, cited or props, trace)

    async def _select(self, llm: LLM, question: str, suggested: list[int], trace: list[TraceStep]) -> list[int]:
        """Select: LLM pruning of suggested propositions; a reply that cannot be parsed keeps none."""
        if not suggested:
            return []
        prompt = SELECT.format(question=question, facts=self._facts(suggested))
        try:
            reply = await llm.json([{"role": "user", "content": prompt}], SelectReply, step="topg.select",
                                   kind="verdict")
            kept = [suggested[n - 1] for n in dict.fromkeys(reply.keep) if 1 <= n <= len(suggested)]
        except StructuredOutputError:
            kept = []  # counted by the LLM layer; nothing is admitted unchecked
        except LLMUnavailableError:
            raise
        trace.append(TraceStep("selector", "select", {"question": question, "suggested": len(suggested)},
                               {"kept": [self.suggester.graph.texts[p] for p in kept]}))
        return kept

    async def _local(self, question: str, llm: LLM) -> Answer:
        """Alg. 1 under the call budget; when it runs out, the facts found so far are the evidence."""
        c = self.config
        trace = self.ctx.trace
        found: list[int] = []
        try:
            with llm.meter.limit(c.max_calls):
                answer = await self._local_loop(question, llm, found, trace)
        except CallBudgetReached:
            trace.append(TraceStep("controller", "budget_reached", {"max_calls": c.max_calls}, {"facts": len(found)}))
            return self._answer(question, None, AnswerStatus.FAILED, found, trace, budget_reached=True,
                                message=f"stopped at the call budget (max_calls={c.max_calls}) without an answer")
        return answer or self._answer(question, None, AnswerStatus.FAILED, found, trace,
                                      message=f"no answer from the collected facts after {c.max_iter} iterations")

    async def _local_loop(self, question: str, llm: LLM, found: list[int], trace: list[TraceStep]) -> Answer | None:
        """Alg. 1: seed with SuggestNaive + Select, then Suggest-Local / Select per pending question,
        Eval after each iteration, NextQ for new sub-questions, up to max_iter iterations."""
        c = self.config
        queries = [question]
        seeds = self.suggester.naive(self.ctx.view.embed_query(question))
        pool = await self._select(llm, question, seeds, trace)
        pool_new = list(pool)
        for iteration in range(c.max_iter):
            for q in queries:
                suggested = self.suggester.local(self.ctx.view.embed_query(q), pool, c.k)
                trace.append(TraceStep("suggester", "suggest.local", {"query": q, "pool": len(pool)},
                                       {"suggested": len(suggested)}))
                for p in await self._select(llm, q, suggested, trace):
                    if p not in pool_new:
                        pool_new.append(p)
            found += [p for p in pool_new if p not in found]
            pool, pool_new = pool_new, []
            verdict = await self._eval(llm, question, found, trace, iteration)
            if verdict is not None and verdict.answerable and verdict.answer.strip():
                used = [found[n - 1] for n in verdict.facts if 1 <= n <= len(found)] or found
                return self._answer(question, verdict.answer.strip(), AnswerStatus.ANSWERED, used, trace)
            if iteration + 1 < c.max_iter:
                queries = await self._next_questions(llm, question, found, trace) or [question]
        return None

    async def _global(self, question: str, llm: LLM) -> Answer:
        """Alg. 2-3 and the report. Under the call budget (one call kept for the report), a budget
        that runs out ends the collection or the intermediate answers; the report is written from
        what was gathered."""
        c = self.config
        trace = self.ctx.trace

        async def select(q: str, suggested: list[int]) -> list[int]:
            return await self._select(llm, q, suggested, trace)

        explorer = GlobalExplorer(self.suggester, c, llm, select, self.ctx.view.embed_query, trace)
        reporter = CommunityReporter(self.suggester, c, self.ctx.store, trace)
        budget_reached = False
        try:
            with llm.meter.limit(None if c.max_calls is None else c.max_calls - 1):
                await explorer.collect_anchors(question)
                await reporter.intermediate(question, reporter.choose(explorer.anchors), llm)
        except CallBudgetReached:
            budget_reached = True
            trace.append(TraceStep("controller", "budget_reached", {"max_calls": c.max_calls},
                                   {"anchors": len(explorer.anchors), "intermediate_answers": len(reporter.scored)}))
        text = await reporter.write(question, llm)
        note = f"stopped at the call budget (max_calls={c.max_calls})" if budget_reached else None
        if text is None:
            return self._answer(question, None, AnswerStatus.FAILED, explorer.anchors, trace,
                                budget_reached=budget_reached,
                                message="; ".join(x for x in (note, "no community around the collected facts "
                                                                    "gave usable material") if x))
        return self._answer(question, text, AnswerStatus.ANSWERED, reporter.used or explorer.anchors, trace,
                            message=note, budget_reached=budget_reached)

    async def _eval(self, llm: LLM, question: str, found: list[int], trace: list[TraceStep],
                    iteration: int) -> EvalReply | None:
        prompt = EVAL.format(question=question, facts=self._facts(found) or "(none)")
        try:
            verdict = await llm.json([{"role": "user", "content": prompt}], EvalReply, step="topg.eval", kind="verdict")
        except StructuredOutputError:
            return None
        trace.append(TraceStep("evaluator", "eval", {"iteration": iteration, "facts": len(found)},
                               verdict.model_dump()))
        return verdict

    async def _next_questions(self, llm: LLM, question: str, found: list[int], trace: list[TraceStep]) -> list[str]:
        prompt = NEXT_QUESTIONS.format(question=question, facts=self._facts(found) or "(none)",
                                       max_questions=self.config.max_next_questions)
        try:
            reply = await llm.json([{"role": "user", "content": prompt}], NextQuestions, step="topg.next_questions",
                                     kind="query")
        except StructuredOutputError:
            return []
        questions = [q.strip() for q in reply.questions if q.strip()][: self.config.max_next_questions]
        trace.append(TraceStep("planner", "next_questions", {}, {"questions": questions}))
        return questions
