"""The MACER loop (ToG-3 Alg. 2): respond, reflect (sufficiency reward), evolve the query, evolve the
subgraph and answer the evolved sub-query on it, until the reward is 1, the Reflector says None, or K
evolutions; then a final answer synthesised from the whole trajectory H_K and its evidence."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from thinkgraph.errors import CallBudgetReached, StructuredOutputError
from thinkgraph.ids import entity_id
from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.llm.judgement import YesNoVerdict, judged
from thinkgraph.llm.service import LLM
from thinkgraph.methods.base import NO_LLM_MESSAGE, MethodContext
from thinkgraph.methods.layout import PREAMBLE, question_prompt
from thinkgraph.methods.replies import UNKNOWN, answer_part, is_abstention
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.methods.tog3.agents import Retriever
from thinkgraph.methods.tog3.config import ToG3Config
from thinkgraph.methods.tog3.constructor import Constructor
from thinkgraph.methods.tog3.prompts import EVOLVE_AGAIN, EVOLVE_QUERY, REASONING, RESPOND, SUFFICIENCY
from thinkgraph.methods.tog3.subgraph import Subgraph
from thinkgraph.methods.tog3.trajectory import Trajectory, read_trajectory, restates, synthesise
from thinkgraph.models import Answer, AnswerStatus, Edge, EdgeType, EvidenceSubgraph, Node, NodeType, TraceStep
from thinkgraph.retrieval.evidence import passages_from_scores

RETRIEVAL_FORMS = {
    "shared": "retrieval=shared: passages ranked by the PPR walk over entities and passages (question entity "
              "links, fact seeds, second hop on the residual question, chained passage), {others} nodes by "
              "vector search",
    "paper": "retrieval=paper: vector search over chunk, {others} nodes, expanded through the graph, passages "
             "reranked by cosine",
}


def variant(config: ToG3Config, *, llm: bool) -> str:
    """What ran, as evaluation reports and ``stats["variant"]`` name it: with or without the agents,
    the Retriever's form, keywords or not, communities or not, and the final reader (its fill)."""
    others = "triplet and community" if config.use_communities else "triplet"
    form = RETRIEVAL_FORMS[config.retrieval].format(others=others)
    communities = "communities" if config.use_communities else "no communities"
    if not llm:
        return f"no LLM: Retriever only ({form}; no keywords; {communities}; no MACER loop)"
    reader = f"reader=shared, reader_fill={config.reader_fill}" + (
        f", reader_fill_passages={config.reader_fill_passages}" if config.reader_fill == "walk" else "") \
        if config.reader == "shared" else "reader=paper"
    return f"MACER loop, horizon {config.horizon} ({form}; keyword expansion; {communities}; {reader})"


# The run's end in words, for the answer's message (stats["outcome"] keeps the name).
OUTCOME_WORDS = {
    "sufficient": "the Reflector judged the evidence sufficient",
    "reflector_stop": "the Reflector found nothing more to ask",
    "horizon": "the evidence was still judged insufficient at the horizon K",
    "budget_reached": "the call budget ended the loop",
}


ABSTAINED_REASON = "the Responser did not answer from this context: insufficient (no Reflector call)"


@dataclass
class ToG3Method:
    ctx: MethodContext
    config: ToG3Config = field(default_factory=ToG3Config)
    name: str = "tog3"
    rounds: Counter[int] = field(default_factory=Counter)  # how many Responser rounds questions needed

    @cached_property
    def retriever(self) -> Retriever:
        return Retriever(self.ctx.view, self.config, self.ctx.llm, self.ctx.settings.retrieval)

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:
            return await self._evidence_only(question)
        return await self._macer(question, llm)

    async def _evidence_only(self, question: str) -> Answer:
        """The Retriever alone (no keyword expansion, no agents): what evaluation measures as
        ToG-3's retrieval without an LLM. Its passages are cited in the Retriever's own order."""
        trace = self.ctx.trace
        graph = await self.retriever.retrieve(question, trace)
        passages = passages_from_scores(self.ctx.store, [(cid, 0.0) for cid in graph.passages])
        return Answer(question=question, method=self.name, text=None, status=AnswerStatus.EVIDENCE_ONLY,
                      citations=citations_for(passages), trace=trace, message=NO_LLM_MESSAGE,
                      evidence=self._evidence(graph), stats={"variant": variant(self.config, llm=False)})

    def _evidence(self, graph: Subgraph) -> EvidenceSubgraph:
        """A subgraph as nodes and edges: its passages and communities, the entities of its triples
        with the typed relations between them (type_s, type_p, type_o where known). Triples refined
        on the fly may name entities the index lacks; they are drawn from their names, with the
        types the triple carries."""
        store = self.ctx.store
        nodes = {n.id: n for n in store.get_nodes([*graph.passages, *graph.communities])}
        edges: list[Edge] = []
        for triple in graph.triples:
            s, p, o = triple
            types = graph.types.get(triple)
            props = {"predicate": p, **(types.props() if types else {})}
            ends = []
            for name, etype in ((s, props.get("subject_type", "")), (o, props.get("object_type", ""))):
                nid = entity_id(name)
                nodes.setdefault(nid, store.get_node(nid) or Node(nid, NodeType.ENTITY, name,
                                                                  {"type": etype} if etype else {}))
                ends.append(nid)
            edges.append(Edge(ends[0], ends[1], EdgeType.OPENREL, props=props))
        return EvidenceSubgraph(nodes=list(nodes.values()), edges=edges,
                                path_texts=[f"{s} -> {p} -> {o}" for s, p, o in graph.triples])

    async def _macer(self, q: str, llm: LLM) -> Answer:
        c = self.config
        trace = self.ctx.trace
        constructor = Constructor(self.retriever, llm, c)
        run = Trajectory(q)
        try:  # one call of the budget is kept for the final synthesis
            with llm.meter.limit(None if c.max_calls is None else c.max_calls - 1):
                await self._loop(run, llm, constructor, trace)
        except CallBudgetReached:
            run.outcome = "budget_reached"
            trace.append(TraceStep("controller", "budget_reached", {"max_calls": c.max_calls}, {}))
        self.rounds[run.rounds] += 1
        synthesis = synthesise if c.reader == "paper" else read_trajectory
        read, shown = await synthesis(llm, self.ctx.store, run, self.retriever, trace)
        notes = [m for m in [read.message] if m]
        notes.append(f"{run.rounds} round(s), {len(run.steps)} evolution(s) of the query and subgraph: "
                     f"{OUTCOME_WORDS.get(run.outcome, run.outcome)}")
        if run.outcome == "budget_reached":
            notes.append(f"stopped at the call budget (max_calls={c.max_calls})")
        notes += [m for m in [constructor.log.message()] if m]
        return Answer(question=q, method=self.name, text=read.text, status=read.status,
                      citations=citations_for(read.cited), trace=trace,
                      evidence=self._evidence(run.evidence(shown, c.max_triples_shown)),
                      message="; ".join(notes),
                      stats={"variant": variant(c, llm=True), "rounds": run.rounds, "evolutions": len(run.steps),
                             "reward": run.reward,
                             "outcome": run.outcome, "extracted_triplets": constructor.log.triples,
                             "triplets_written": constructor.log.triples if constructor.log.written else 0})

    async def _loop(self, run: Trajectory, llm: LLM, constructor: Constructor, trace: list[TraceStep]) -> None:
        """Alg. 2 lines 1-12: up to K rounds; each insufficient one evolves the query and the subgraph
        (G_{k+1}) and answers the evolved sub-query on it, so that K evolutions are possible."""
        c = self.config
        graph = await self.retriever.retrieve(run.question, trace)
        run.graphs.append(graph)
        for k in range(c.horizon):
            run.rounds = k + 1
            answer = await self._respond(llm, run.question, graph, run, trace)
            run.answers.append(answer)
            run.reward = await self._reward(llm, run.question, graph, answer, trace)
            if run.reward == 1:
                run.outcome = "sufficient"
                return
            sub_query = await self._evolve_query(llm, run, graph, trace) if c.evolve_query else run.question
            if sub_query is None:
                run.outcome = "reflector_stop"  # the Reflector's STOP: nothing more can be extracted
                return
            if c.evolve_subgraph:
                graph = await constructor.evolve(sub_query, graph, trace)
            else:
                graph = await self.retriever.retrieve(sub_query, trace)
            run.graphs.append(graph)
            sub_answer = await self._respond(llm, sub_query, graph, run, trace)
            run.add_step(sub_query, sub_answer, answer, run.reward, graph)
        run.outcome = "horizon"

    def _reasoning(self, run: Trajectory) -> str:
        return "\n".join(f"- {s.sub_query} -> {s.sub_answer}" for s in run.steps)

    async def _respond(self, llm: LLM, query: str, graph: Subgraph, run: Trajectory,
                       trace: list[TraceStep]) -> str:
        """The Responser: a_k from (q, G_k, H_k) (Alg. 2 line 4), or an evolved sub-query's answer on
        its evolved subgraph."""
        steps = self._reasoning(run)
        instruction = RESPOND.format(reasoning=REASONING.format(steps=steps) if steps else "")
        messages = question_prompt(self.retriever.context(graph), instruction, query)
        answer = (await llm.text(messages, step="tog3.respond", kind="answer")).strip()
        if _echoes(answer, RESPOND):
            answer = UNKNOWN  # a copy of the prompt answers nothing (and must not reach the reader as one)
        trace.append(TraceStep("responser", "respond", {"query": query, "history": len(run.steps),
                                                        "sub_query": query != run.question},
                               {"answer": answer}, prompt="RESPOND"))
        return answer

    async def _reward(self, llm: LLM, q: str, graph: Subgraph, answer: str, trace: list[TraceStep]) -> int:
        """The Reflector's sufficiency reward: its reason first, then yes/no, held to P(yes) >=
        ``reflector_threshold`` where the server gives log-probabilities. An abstaining answer is
        insufficient without a call (``abstention_is_insufficient``)."""
        if self.config.abstention_is_insufficient and (not answer.strip() or is_abstention(answer_part(answer)[0])):
            trace.append(TraceStep("reflector", "sufficiency", {}, {"reward": 0, "reason": ABSTAINED_REASON},
                                   prompt="SUFFICIENCY"))
            return 0
        messages = question_prompt(self.retriever.context(graph), SUFFICIENCY.format(answer=answer or "(none)"), q)
        try:
            verdict, p_yes = await llm.judge(messages, YesNoVerdict, keys=("verdict",), step="tog3.reflect")
            judgement = judged(verdict, p_yes, "verdict", self.config.reflector_threshold, verdict.reason)
            outputs = judgement.trace()
            reward = int(judgement.passed)
        except StructuredOutputError as exc:  # counted by the LLM layer; unsure means keep looking
            reward, outputs = 0, {"reason": f"unparsed: {exc}"}
        trace.append(TraceStep("reflector", "sufficiency", {}, {"reward": reward, **outputs}, prompt="SUFFICIENCY"))
        return reward

    async def _evolve_query(self, llm: LLM, run: Trajectory, graph: Subgraph, trace: list[TraceStep]) -> str | None:
        """The Reflector's next question (Alg. 2 line 8), or None for its STOP; a copy of the prompt names
        no question, and the question itself (which Fig. 14 allows) is retrieved. One that restates the
        question is asked again once, told why (``restated_query_again``). The second reply stands, unless
        it is a STOP or a copy of the prompt: then the restated question does, so that asking again never
        ends the loop where the paper's prompt would have gone on."""
        steps = self._reasoning(run)
        instruction = EVOLVE_QUERY.format(reasoning=f"\n{steps}" if steps else " None")
        messages = question_prompt(self.retriever.context(graph), instruction, run.question)
        reply = (await llm.text(messages, step="tog3.evolve_query", kind="query")).strip()
        sub_query = run.question if _echoes(reply, EVOLVE_QUERY) else parse_sub_query(reply)
        outputs: dict[str, object] = {"sub_query": sub_query}
        try:
            if self.config.restated_query_again and sub_query is not None and restates(sub_query, run.question):
                outputs["restated"] = sub_query
                messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": EVOLVE_AGAIN}]
                reply = (await llm.text(messages, step="tog3.evolve_query.again", kind="query")).strip()
                echoed = _echoes(reply, EVOLVE_QUERY, EVOLVE_AGAIN)
                sub_query = (None if echoed else parse_sub_query(reply)) or sub_query
                outputs["sub_query"] = sub_query
        finally:  # the step is traced even when the call budget ends the loop at the second call
            trace.append(TraceStep("reflector", "evolve_query", {}, outputs,
                                   prompt="EVOLVE_QUERY" + (", EVOLVE_AGAIN" if "restated" in outputs else "")))
        return sub_query


def _echoes(reply: str, *templates: str) -> bool:
    """Whether a reply copies the shared preamble or one of the step's templates (a weak model's)."""
    return any(echoes_instructions(reply, t) for t in (PREAMBLE, *templates))


# A label before a question ("Question:", "Original question:", "Sub-question:"), not part of it; "Next
# question:" marks the Reflector's answer and is read first.
_LABEL = re.compile(r"^(?:the\s+)?(?:original\s+|new\s+|sub-?\s*)?question\s*:\s*", re.IGNORECASE)


def parse_sub_query(reply: str) -> str | None:
    """The evolved sub-query in a reply ("Next question: ..." or the first line that is not a
    preamble), or None for the Reflector's STOP."""
    lines = [_LABEL.sub("", ln.replace("*", "").strip()) for ln in reply.splitlines()]
    lines = [ln for ln in lines if ln]
    labelled = next((ln for ln in lines if ln.casefold().startswith("next question:")), None)
    line = labelled.split(":", 1)[1].strip() if labelled else next(
        (ln for ln in lines if ln.endswith("?") or ln.strip(".'\"").casefold() == "none"), lines[0] if lines else "")
    return None if not line or line.strip(".'\"").casefold() == "none" else line
