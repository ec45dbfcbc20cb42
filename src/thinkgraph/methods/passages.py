"""Baselines that answer from retrieved passages: `naive` (dense chunk RAG) and `ppr`
(HippoRAG-style personalized PageRank over entities and passages)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.synthesis import answer_from_evidence, evidence_only
from thinkgraph.models import Answer, TraceStep
from thinkgraph.retrieval.dense import DenseRetriever
from thinkgraph.retrieval.evidence import GraphRetriever


@dataclass
class PassageMethod:
    """Retrieve passages, then answer from them (or return the evidence when no LLM is set)."""

    name: str
    ctx: MethodContext
    retriever: DenseRetriever | GraphRetriever
    top_k: int

    async def answer(self, question: str) -> Answer:
        started = time.perf_counter()
        evidence = self.retriever.retrieve(question, self.top_k)
        trace = [TraceStep(agent="retriever", action=f"retrieve.{self.retriever.name}",
                           inputs={"question": question, "top_k": self.top_k},
                           outputs={"passages": [p.chunk_id for p in evidence.passages],
                                    "seeds": [s[1] for s in evidence.seeds]},
                           seconds=time.perf_counter() - started)]
        llm = self.ctx.llm
        if llm is None:
            answer = evidence_only(question, self.name, evidence, trace)
        else:
            with llm.meter.scope() as cost:
                answer = await answer_from_evidence(llm, question, self.name, evidence, trace)
            answer.cost = cost
        answer.cost.seconds = time.perf_counter() - started
        return answer


def naive_method(ctx: MethodContext, top_k: int | None = None) -> PassageMethod:
    return PassageMethod("naive", ctx, DenseRetriever(ctx.view), top_k or ctx.settings.retrieval.top_k)


def ppr_method(ctx: MethodContext, top_k: int | None = None) -> PassageMethod:
    return PassageMethod("ppr", ctx, GraphRetriever(ctx.view, ctx.settings.retrieval),
                         top_k or ctx.settings.retrieval.top_k)
