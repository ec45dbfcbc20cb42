"""The MACER loop (ToG-3 Alg. 2): respond, reflect (sufficiency reward), evolve the query, evolve the
subgraph, until the reward is 1, the Reflector says None, or the horizon K; then a final answer
synthesised from the whole trajectory."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from pydantic import BaseModel

from thinkgraph.errors import ConfigError, StructuredOutputError
from thinkgraph.ids import entity_id
from thinkgraph.llm.service import LLM
from thinkgraph.methods.base import NO_LLM_MESSAGE, MethodContext
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.methods.tog3.agents import Constructor, Retriever, Subgraph
from thinkgraph.methods.tog3.config import ToG3Config
from thinkgraph.methods.tog3.prompts import EVOLVE_QUERY, FINAL, RESPOND, SUFFICIENCY
from thinkgraph.models import Answer, Edge, EdgeType, EvidenceSubgraph, Node, NodeType, TraceStep
from thinkgraph.retrieval.evidence import passages_from_scores


class Reward(BaseModel):
    sufficient: bool
    reason: str = ""


@dataclass
class Step:
    """One entry of the history H: (sub-query, answer, reward, resulting subgraph)."""

    sub_query: str
    answer: str
    reward: int
    subgraph: dict[str, int]


@dataclass
class ToG3Method:
    ctx: MethodContext
    config: ToG3Config = field(default_factory=ToG3Config)
    name: str = "tog3"
    rounds: Counter[int] = field(default_factory=Counter)  # how many rounds questions needed

    @cached_property
    def retriever(self) -> Retriever:
        return Retriever(self.ctx.view, self.config, self.ctx.llm)

    def _llm(self) -> LLM:
        if self.ctx.llm is None:
            raise ConfigError("method 'tog3' needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")
        return self.ctx.llm

    async def answer(self, question: str) -> Answer:
        if self.ctx.llm is None:
            return await self._evidence_only(question)
        llm = self._llm()
        started = time.perf_counter()
        with llm.meter.scope() as cost:
            answer = await self._macer(question, llm)
        answer.cost = cost
        answer.cost.seconds = time.perf_counter() - started
        return answer

    async def _evidence_only(self, question: str) -> Answer:
        """The Retriever's hybrid vector-graph retrieval and rerank alone (no keyword expansion, no
        agents): what evaluation measures as ToG-3's retrieval without an LLM."""
        trace: list[TraceStep] = []
        graph = await self.retriever.retrieve(question, trace)
        passages = passages_from_scores(self.ctx.store, [(cid, 0.0) for cid in graph.passages])
        return Answer(question=question, method=self.name, text=None, status="evidence_only",
                      citations=citations_for(passages), trace=trace, message=NO_LLM_MESSAGE,
                      evidence=self._evidence(graph))

    def _evidence(self, graph: Subgraph) -> EvidenceSubgraph:
        """The final subgraph as nodes and edges: its passages and communities, the entities of its
        triples with the relations between them (triples refined on the fly may name entities the
        index lacks; they are drawn from their names)."""
        store = self.ctx.store
        nodes = {n.id: n for n in store.get_nodes([*graph.passages, *graph.communities])}
        edges: list[Edge] = []
        for s, p, o in graph.triples:
            ends = []
            for name in (s, o):
                nid = entity_id(name)
                nodes.setdefault(nid, store.get_node(nid) or Node(nid, NodeType.ENTITY, name))
                ends.append(nid)
            edges.append(Edge(ends[0], ends[1], EdgeType.OPENREL, props={"predicate": p}))
        return EvidenceSubgraph(nodes=list(nodes.values()), edges=edges,
                                path_texts=[f"{s} -> {p} -> {o}" for s, p, o in graph.triples])

    async def _macer(self, q: str, llm: LLM) -> Answer:
        c = self.config
        trace: list[TraceStep] = []
        constructor = Constructor(self.retriever, llm, c)
        graph = await self.retriever.retrieve(q, trace)
        history: list[Step] = []
        answer, reward, rounds = "", 0, 0
        for k in range(c.horizon):
            rounds = k + 1
            answer = await self._respond(llm, q, graph, trace)
            reward = await self._reward(llm, q, graph, answer, trace)
            if reward == 1:
                break
            if k + 1 == c.horizon:
                break  # no round left for an evolved subgraph
            sub_query = await self._evolve_query(llm, q, graph, history, answer, trace) if c.evolve_query else q
            if sub_query is None:
                break  # the Reflector's STOP: nothing more can be extracted
            if c.evolve_subgraph:
                graph = await constructor.evolve(sub_query, graph, trace)
            else:
                graph = await self.retriever.retrieve(sub_query, trace)
            history.append(Step(sub_query, answer, reward, graph.summary()))
        self.rounds[rounds] += 1
        final = await self._final(llm, q, graph, history, answer, trace)
        abstained = final.strip().strip(".").casefold() == "unknown"
        passages = passages_from_scores(self.ctx.store, [(cid, 0.0) for cid in graph.passages])
        return Answer(question=q, method=self.name, text=final, status="abstained" if abstained else "answered",
                      citations=citations_for(passages), trace=trace,
                      evidence=self._evidence(graph), message=f"{rounds} round(s); last reward {reward}",
                      stats={"rounds": rounds, "reward": reward})

    async def _respond(self, llm: LLM, q: str, graph: Subgraph, trace: list[TraceStep]) -> str:
        prompt = RESPOND.format(context=self.retriever.context(graph), query=q)
        answer = (await llm.text([{"role": "user", "content": prompt}], step="tog3.respond", kind="answer")).strip()
        trace.append(TraceStep("responser", "respond", {"query": q}, {"answer": answer}, prompt="RESPOND"))
        return answer

    async def _reward(self, llm: LLM, q: str, graph: Subgraph, answer: str, trace: list[TraceStep]) -> int:
        prompt = SUFFICIENCY.format(query=q, answer=answer, context=self.retriever.context(graph))
        try:
            verdict = await llm.json([{"role": "user", "content": prompt}], Reward, step="tog3.reflect", kind="verdict")
            reward = int(verdict.sufficient)
            reason = verdict.reason
        except StructuredOutputError as exc:  # counted by the LLM layer; unsure means keep looking
            reward, reason = 0, f"unparsed: {exc}"
        trace.append(TraceStep("reflector", "sufficiency", {}, {"reward": reward, "reason": reason},
                               prompt="SUFFICIENCY"))
        return reward

    async def _evolve_query(self, llm: LLM, q: str, graph: Subgraph, history: list[Step], answer: str,
                            trace: list[TraceStep]) -> str | None:
        reasoning = "\n".join(f"- {h.sub_query} -> {h.answer}" for h in history) or f"- {q} -> {answer}"
        prompt = EVOLVE_QUERY.format(query=q, context=self.retriever.context(graph), reasoning=reasoning)
        reply = (await llm.text([{"role": "user", "content": prompt}], step="tog3.evolve_query", kind="query")).strip()
        line = reply.splitlines()[0].removeprefix("Next question:").strip() if reply else ""
        sub_query = None if not line or line.strip(".'\"").casefold() == "none" else line
        trace.append(TraceStep("reflector", "evolve_query", {}, {"sub_query": sub_query}, prompt="EVOLVE_QUERY"))
        return sub_query

    async def _final(self, llm: LLM, q: str, graph: Subgraph, history: list[Step], answer: str,
                     trace: list[TraceStep]) -> str:
        steps = [*history, Step(q, answer, 0, graph.summary())]
        trajectory = "\n".join(f"- {h.sub_query} -> {h.answer}" for h in steps)
        prompt = FINAL.format(query=q, trajectory=trajectory, context=self.retriever.context(graph))
        final = (await llm.text([{"role": "user", "content": prompt}], step="tog3.final", kind="answer")).strip()
        trace.append(TraceStep("responser", "final", {"rounds": len(history) + 1}, {"answer": final}, prompt="FINAL"))
        return final
