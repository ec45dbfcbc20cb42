"""ToPG as a method returning an Answer: Naive and Local modes (ToPG §2.3.1-2.3.2, Alg. 1) here, Global
mode (Alg. 2-3) in global_mode.py, the entry points into the proposition graph in entry.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from pydantic import BaseModel, Field

from thinkgraph.errors import CallBudgetReached, InputError, LLMUnavailableError, StructuredOutputError
from thinkgraph.llm.service import LLM
from thinkgraph.methods.base import NO_LLM_MESSAGE, MethodContext
from thinkgraph.methods.replies import answer_format, answer_trace, ask_answer
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.entry import EntryPoints
from thinkgraph.methods.topg.fill import WalkFill
from thinkgraph.methods.topg.global_mode import CommunityReporter, GlobalExplorer, SelectFn
from thinkgraph.methods.topg.graph import PropositionGraph, proposition_graph
from thinkgraph.methods.topg.prompts import EVAL, NAIVE_ANSWER, NEXT_QUESTIONS
from thinkgraph.methods.topg.reading import FactReader
from thinkgraph.methods.topg.select import ReasonedSelectReply, select_request
from thinkgraph.methods.topg.suggest import Suggester
from thinkgraph.methods.topg.variants import variant
from thinkgraph.models import Answer, AnswerStatus, EvidenceSubgraph, Node, TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage, passages_from_scores

# Global answers rest on hundreds of facts: they cite (and return) the passages of the first ones. Naive
# and local answers return every passage of their facts (at most (1 + max_iter * max_next_questions) * k).
MAX_CITED_PASSAGES = 20


class EvalReply(BaseModel):
    answerable: bool
    answer: str = ""
    facts: list[int] = Field(default_factory=list)


class NextQuestions(BaseModel):
    questions: list[str] = Field(default_factory=list)


@dataclass
class ToPGMethod:
    ctx: MethodContext
    config: ToPGConfig = field(default_factory=ToPGConfig)
    name: str = "topg"
    graph: PropositionGraph | None = None
    select_fallbacks: int = 0  # Select replies that stayed unusable (every suggestion was kept)
    _entry_props: list[int] = field(default_factory=list)  # the entry's propositions of the current question
    # each query embedded once: the entry, every iteration's Suggest-local and the reading order use it
    _query_vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @cached_property
    def suggester(self) -> Suggester:
        graph = self.graph or proposition_graph(self.ctx.view)
        if graph.n == 0:
            # the index, not the command, cannot be used: exit 2 (input), as any index that lacks a stage
            raise InputError("topg needs propositions or triplets in the index; build it with "
                              "--extractor propositions, llm or import, or with [index] nolm_propositions = true "
                              "(sentences as propositions) for the model-free extractors")
        return Suggester(graph, self.config)

    def _embed(self, text: str) -> np.ndarray:
        if text not in self._query_vectors:
            self._query_vectors[text] = self.ctx.view.embed_query(text)
        return self._query_vectors[text]

    @cached_property
    def entry_points(self) -> EntryPoints:
        return EntryPoints(self.ctx.view, self.suggester, self.config, self.ctx.settings.retrieval)

    def _enter(self, question: str, trace: list[TraceStep], *, record: bool) -> list[int]:
        """The entry propositions (SuggestNaive's, or the switch's). Recorded as a step of its own when
        asked; SuggestNaive before a Select is recorded by that Select (``suggested_by``)."""
        entry = self.entry_points.enter(question, self._embed(question))
        if record:
            trace.append(entry.step)
        return entry.propositions

    @property
    def _entry_action(self) -> str:
        return "suggest.entry" if self.config.entry == "ppr_passages" else "suggest.naive"

    def _facts(self, props: list[int]) -> str:
        return "\n".join(f"[{i}] {self.suggester.graph.texts[p]}" for i, p in enumerate(props, 1))

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:
            return await self._without_llm(question)
        run = {"naive": self._naive, "local": self._local, "global": self._global}[self.config.mode]
        return await run(question, llm)

    async def _without_llm(self, question: str) -> Answer:
        """What each mode's retrieve steps collect with every LLM decision at its neutral default
        (Select keeps every suggestion, Eval never answers, NextQ asks nothing new): its
        propositions, and their passages in the order collected."""
        trace = self.ctx.trace
        if self.config.mode == "global":
            props = await self._global_anchors_only(question)
        elif self.config.mode == "naive":
            props = self._enter(question, trace, record=True)
        else:
            props = []
            await self._local_loop(question, None, props, trace)
            props = self._reading_order(question, props, trace)
        answer = self._answer(question, None, AnswerStatus.EVIDENCE_ONLY, props, trace)
        answer.message = NO_LLM_MESSAGE
        return answer

    async def _global_anchors_only(self, question: str) -> list[int]:
        """Alg. 2 without an LLM: the question alone seeds (no decomposition), every suggestion is kept
        (no Select, so Rocchio has no pruned set), then Alg. 3 picks the communities a report would
        read; the anchors, in the order collected, are the evidence."""
        trace = self.ctx.trace

        async def keep_all(query: str, suggested: list[int]) -> list[int]:
            return suggested

        explorer = self._explorer(None, keep_all, trace)
        anchors = await explorer.collect_anchors(question)
        CommunityReporter(self.suggester, self.config, self.ctx.store, trace).choose(anchors)
        return anchors

    def _explorer(self, llm: LLM | None, select: SelectFn, trace: list[TraceStep]) -> GlobalExplorer:
        record = self.config.entry == "ppr_passages" or llm is None

        def enter(sub_question: str) -> list[int]:
            return self._enter(sub_question, trace, record=record)

        return GlobalExplorer(self.suggester, self.config, llm, select, self._embed, trace, enter=enter)

    def _answer(self, question: str, text: str | None, status: AnswerStatus, props: list[int],
                trace: list[TraceStep], message: str | None = None, *, collected: Sequence[int] = (),
                budget_reached: bool = False, cited: Sequence[ScoredPassage] | None = None,
                read: Sequence[str] = ()) -> Answer:
        """``props``: the facts the answer rests on, in the method's own order (Eval's, the answerer's
        citations, or s_loc as collected: the entry's by cosine, then each walk's by PPR on M); their
        passages are the citations. The evidence is those facts, then the rest of ``collected`` (what the
        method's steps collected and Select kept), and the passages the reader ``read`` (its fill's among
        them) followed by those of the facts in that order: nothing a step of the method did not collect,
        Select pruned or its reader did not read, and no other ranking."""
        g = self.suggester.graph
        facts = list(dict.fromkeys([*props, *collected]))
        cap = MAX_CITED_PASSAGES if self.config.mode == "global" else None
        passages = list(cited) if cited is not None else \
            passages_from_scores(self.ctx.store, [(c, 0.0) for c in self.suggester.passages_of(props)[:cap]])
        nodes = [Node(g.ids[p], "proposition", g.texts[p]) for p in facts]
        chunks = list(dict.fromkeys([*read, *self.suggester.passages_of(facts)]))[:cap]
        nodes += [Node(n.id, "chunk", n.text, {"doc_id": n.props.get("doc_id")})
                  for n in self.ctx.store.get_nodes(chunks)]
        c = self.config
        stats = {"mode": c.mode, "entry": c.entry, "facts": len(props),
                 "variant": variant(c, with_llm=self.ctx.llm is not None),
                 **({"select_fallbacks": self.select_fallbacks} if self.select_fallbacks else {})}
        return Answer(question=question, method=self.name, text=text, status=status,
                      citations=citations_for(passages), evidence=EvidenceSubgraph(nodes=nodes),
                      trace=trace, message=message,
                      stats={**stats, **({"outcome": "budget_reached"} if budget_reached else {})})

    async def _naive(self, question: str, llm: LLM) -> Answer:
        """Naive: the entry's propositions (SuggestNaive's, in the paper) answer the question directly,
        without Select."""
        trace = self.ctx.trace
        props = self._enter(question, trace, record=True)
        prompt = NAIVE_ANSWER.format(question=question, facts=self._facts(props),
                                     answer_format=answer_format("facts", question))
        asked = await ask_answer(llm, [{"role": "user", "content": prompt}], props, step="topg.naive_answer",
                                 prompt_template=NAIVE_ANSWER)
        trace.append(answer_trace("responder", "topg.naive_answer", "NAIVE_ANSWER", asked, {}, len(props)))
        read = asked.read
        return self._answer(question, read.text, read.status, read.cited, trace, read.message, collected=props)

    async def _select(self, llm: LLM | None, question: str, suggested: list[int], trace: list[TraceStep],
                      suggested_by: str, most: int | None = None) -> list[int]:
        """Select: LLM pruning of suggested propositions; the kept ones stay in Suggest's order (Select
        prunes, it does not rank). A reply that cannot be used keeps every suggestion (its neutral
        default, as without an LLM: a weak model's bad reply must not empty the pool the walk found),
        traced and counted in ``stats.select_fallbacks``. Without an LLM, or with ``select = False``
        (the no-Select ablation), every suggestion is kept, and nothing is recorded. ``most`` bounds
        what is kept (``select_max``): the first ``most`` numbers the reply lists."""
        if llm is None or not self.config.select:
            return list(suggested)
        if not suggested:
            return []
        request = select_request(self.config.select_form, question, self._facts(suggested), suggested=len(suggested),
                                 most=most)
        try:
            reply = await llm.json(request.messages, request.reply, step="topg.select", kind="verdict")
            listed = [n for n in dict.fromkeys(reply.keep) if 1 <= n <= len(suggested)]
            keep = set(listed[:request.bound] if request.bound is not None else listed)
            kept = [p for n, p in enumerate(suggested, 1) if n in keep]
        except StructuredOutputError as exc:  # (counted by the LLM layer too)
            self.select_fallbacks += 1
            trace.append(TraceStep("selector", "select.fallback", {"question": question,
                                                                   "suggested_by": suggested_by},
                                   {"kept": len(suggested), "why": f"unusable reply, every suggestion kept: {exc}"}))
            return list(suggested)
        except LLMUnavailableError:
            raise
        trace.append(TraceStep("selector", "select", {"question": question, "suggested": len(suggested),
                                                      "suggested_by": suggested_by},
                               {"kept": [self.suggester.graph.texts[p] for p in kept],
                                **({"listed": len(listed), "most": most} if request.bound is not None else {}),
                                **({"reason": reply.reason} if isinstance(reply, ReasonedSelectReply) else {})}))
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
            if c.reader == "shared":  # the evidence in the order the reader would have read it
                found = self._reading_order(question, found, trace)
            return self._answer(question, None, AnswerStatus.FAILED, found, trace, budget_reached=True,
                                message=f"stopped at the call budget (max_calls={c.max_calls}) without an answer")
        if answer is not None:
            return answer
        # s_loc, as collected; when Select kept nothing, what SuggestNaive (or the entry) collected
        evidence, note = (found, "") if found else (self._entry_props, "; Select kept no fact, so the evidence "
                                                    "is the entry's propositions")
        return self._answer(question, None, AnswerStatus.FAILED, evidence, trace,
                            message=f"no answer from the collected facts after {c.max_iter} iterations{note}")

    async def _local_loop(self, question: str, llm: LLM | None, found: list[int],
                          trace: list[TraceStep]) -> Answer | None:
        """Alg. 1: the entry + Select seed the pool; per iteration, Suggest-local / Select per pending
        question, then Eval and NextQ, up to max_iter iterations. ``found`` (s_loc) grows as it goes.
        Suggest-local never proposes a proposition already collected (in s_loc or, from an earlier
        question of this iteration, in s_pool-new): it would take a slot and a Select for nothing.
        Without an LLM every suggestion is kept and all max_iter iterations run on the question."""
        c = self.config
        queries = [question]
        seeds = self._enter(question, trace, record=llm is None or c.entry == "ppr_passages")
        self._entry_props = list(seeds)
        pool = await self._select(llm, question, seeds, trace, self._entry_action, c.select_max)
        pool_new = list(pool)
        rounds: list[list[int]] = [list(pool)]  # what the entry, then each iteration, added to s_loc
        for iteration in range(c.max_iter):
            for q in queries:
                taken = {*found, *pool_new}
                suggested = self.suggester.local(self._embed(q), pool, c.k, exclude=taken)
                trace.append(TraceStep("suggester", "suggest.local",
                                       {"iteration": iteration + 1, "query": q, "pool": len(pool),
                                        "excluded": len(taken)}, {"suggested": len(suggested)}))
                for p in await self._select(llm, q, suggested, trace, "suggest.local", c.select_max):
                    if p not in pool_new:
                        pool_new.append(p)
            added = [p for p in pool_new if p not in found]
            found += added
            rounds.append([p for p in added if p not in rounds[0]])
            pool, pool_new = pool_new, []
            if llm is None:
                continue
            if c.reader == "shared":
                if (found and await self.fact_reader.answerable(llm, question, found, trace, iteration + 1)) \
                        or iteration + 1 == c.max_iter:
                    return await self._read(llm, question, found, trace, rounds)
                queries = await self._next_questions(llm, question, found, trace) or [question]
                continue
            verdict = await self._eval(llm, question, found, trace, iteration)
            if verdict is not None and verdict.answerable and verdict.answer.strip():
                used = [found[n - 1] for n in dict.fromkeys(verdict.facts) if 1 <= n <= len(found)] or found
                return self._answer(question, verdict.answer.strip(), AnswerStatus.ANSWERED, used, trace,
                                    collected=found)
            if iteration + 1 < c.max_iter:
                queries = await self._next_questions(llm, question, found, trace) or [question]
        return None

    @cached_property
    def fact_reader(self) -> FactReader:
        c = self.config
        fill = WalkFill(self.ctx.view, self.ctx.settings.retrieval, self.suggester.graph, self._embed) \
            if c.reader_fill == "walk" else None
        return FactReader(self.suggester, self.ctx.store, c.eval_threshold, c.reader_passages, c.reader_facts,
                          fill, c.reader_fill_passages)

    def _reading_order(self, question: str, facts: list[int], trace: list[TraceStep]) -> list[int]:
        """The collected facts in the order the reader reads them (``reader_order = "walk"``: ranked by
        the walk on M among them, traced); the evidence without an LLM, or at the call budget, follows
        it. Other orders leave the facts as they are."""
        if self.config.reader_order != "walk":
            return facts
        ranked = self.suggester.rank_collected(self._embed(question), facts)
        trace.append(TraceStep("reader", "rank_collected", {"facts": len(ranked), "order": "walk on M"},
                               {"first": [self.suggester.graph.texts[p] for p in ranked[:5]]}))
        return ranked

    async def _read(self, llm: LLM, question: str, found: list[int], trace: list[TraceStep],
                    rounds: list[list[int]]) -> Answer:
        """The one reader's answer from the collected facts' passages (``reader_order``: as collected,
        each round's in turn, or ranked by a walk on M among them); it cites what it read. When Select
        kept no fact, the entry's propositions are what it reads (as the paper form's evidence then)."""
        facts = self._reading_order(question, found or self._entry_props, trace)
        by_round = rounds if found and self.config.reader_order == "rounds" else [facts]
        read, shown = await self.fact_reader.answer(llm, question, facts, trace, by_round)
        note = None if found else "Select kept no fact, so the reader read the entry's propositions"
        message = "; ".join(m for m in (read.message, note) if m) or None
        return self._answer(question, read.text, read.status, facts, trace, message, collected=facts,
                            cited=read.cited, read=shown)

    async def _global(self, question: str, llm: LLM) -> Answer:
        """Alg. 2-3 and the report. Under the call budget (one call kept for the report), a budget
        that runs out ends the collection or the intermediate answers; the report is written from
        what was gathered."""
        c = self.config
        trace = self.ctx.trace

        async def select(q: str, suggested: list[int]) -> list[int]:
            return await self._select(llm, q, suggested, trace, "suggest.global")

        explorer = self._explorer(llm, select, trace)
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
        # a placeholder ("...", the prompt's own example) asks nothing
        asked = [q.strip() for q in reply.questions if any(ch.isalnum() for ch in q)]
        questions = asked[: self.config.max_next_questions]
        trace.append(TraceStep("planner", "next_questions", {}, {"questions": questions}))
        return questions
