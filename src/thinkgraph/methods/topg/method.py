"""ToPG's Naive and Local modes (ToPG §2.3.1-2.3.2, Alg. 1) as a method returning an Answer."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import cached_property

from pydantic import BaseModel, Field

from thinkgraph.errors import ConfigError, LLMUnavailableError, StructuredOutputError
from thinkgraph.llm.service import LLM
from thinkgraph.methods.base import NO_LLM_MESSAGE, MethodContext
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.global_mode import CommunityReporter, GlobalExplorer
from thinkgraph.methods.topg.graph import PropositionGraph, build_proposition_graph
from thinkgraph.methods.topg.prompts import EVAL, NAIVE_ANSWER, NEXT_QUESTIONS, SELECT
from thinkgraph.methods.topg.suggest import Suggester
from thinkgraph.models import Answer, EvidenceSubgraph, Node, TraceStep
from thinkgraph.retrieval.evidence import passages_from_scores

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
        started = time.perf_counter()
        llm = self.ctx.llm
        if llm is None:
            props, trace = self._suggest_only(question)
            answer = self._answer(question, None, "evidence_only", props, trace)
            answer.message = NO_LLM_MESSAGE
        else:
            with llm.meter.scope() as cost:
                run = {"naive": self._naive, "local": self._local, "global": self._global}[self.config.mode]
                answer = await run(question, llm)
            answer.cost = cost
        answer.cost.seconds = time.perf_counter() - started
        return answer

    def _suggest_only(self, question: str) -> tuple[list[int], list[TraceStep]]:
        """Without an LLM there is no Select: mode naive shows SuggestNaive's propositions; local and
        global show the query-aware walk, Suggest-local iterated ``max_iter`` times from naive's
        best ``EVIDENCE_SEEDS`` propositions with every suggestion kept."""
        vec = self.ctx.view.embed_query(question)
        naive = self.suggester.naive(vec)
        trace = [TraceStep("suggester", "suggest.naive", {"k": self.config.k}, {"propositions": len(naive)})]
        if self.config.mode == "naive":
            return naive, trace
        pool = naive[:EVIDENCE_SEEDS]
        for iteration in range(self.config.max_iter):
            new = [p for p in self.suggester.local(vec, pool) if p not in pool]
            pool += new
            trace.append(TraceStep("suggester", "suggest.local", {"iteration": iteration + 1}, {"new": len(new)}))
        return pool, trace

    def _answer(self, question: str, text: str | None, status: str, props: list[int],
                trace: list[TraceStep], message: str | None = None) -> Answer:
        g = self.suggester.graph
        chunks = self.suggester.passages_of(props)[:MAX_CITED_PASSAGES]
        passages = passages_from_scores(self.ctx.store, [(c, 0.0) for c in chunks])
        nodes = [Node(g.ids[p], "proposition", g.texts[p]) for p in props]
        return Answer(question=question, method=self.name, text=text, status=status,
                      citations=citations_for(passages), evidence=EvidenceSubgraph(nodes=nodes),
                      trace=trace, message=message, stats={"mode": self.config.mode, "facts": len(props)})

    async def _naive(self, question: str, llm: LLM) -> Answer:
        """Naive: SuggestNaive's propositions answer the question directly, without Select."""
        props = self.suggester.naive(self.ctx.view.embed_query(question))
        prompt = NAIVE_ANSWER.format(question=question, facts=self._facts(props))
        reply = (await llm.text([{"role": "user", "content": prompt}], step="topg.naive_answer", kind="answer")).strip()
        trace = [TraceStep("suggester", "suggest.naive", {"k": self.config.k}, {"propositions": len(props)}),
                 TraceStep("responder", "topg.naive_answer", {}, {"reply": reply})]
        cited = [props[int(n) - 1] for n in _CITE.findall(reply) if 1 <= int(n) <= len(props)]
        text = _CITE.sub("", reply).strip()
        status = "abstained" if text.strip(".").casefold() == "unknown" else "answered"
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
        """Alg. 1: seed with SuggestNaive + Select, then Suggest-Local / Select per pending question,
        Eval after each iteration, NextQ for new sub-questions, up to max_iter iterations."""
        c = self.config
        trace: list[TraceStep] = []
        queries = [question]
        seeds = self.suggester.naive(self.ctx.view.embed_query(question))
        pool = await self._select(llm, question, seeds, trace)
        pool_new = list(pool)
        found: list[int] = []
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
                return self._answer(question, verdict.answer.strip(), "answered", used, trace)
            if iteration + 1 < c.max_iter:
                queries = await self._next_questions(llm, question, found, trace) or [question]
        return self._answer(question, None, "failed", found, trace,
                            message=f"no answer from the collected facts after {c.max_iter} iterations")

    async def _global(self, question: str, llm: LLM) -> Answer:
        trace: list[TraceStep] = []

        async def select(q: str, suggested: list[int]) -> list[int]:
            return await self._select(llm, q, suggested, trace)

        explorer = GlobalExplorer(self.suggester, self.config, llm, select, self.ctx.view.embed_query, trace)
        anchors = await explorer.collect_anchors(question)
        reporter = CommunityReporter(self.suggester, self.config, self.ctx.store, llm, trace)
        text, used = await reporter.report(question, anchors)
        if text is None:
            return self._answer(question, None, "failed", anchors, trace,
                                message="no community around the collected facts gave usable material")
        return self._answer(question, text, "answered", used or anchors, trace)

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
