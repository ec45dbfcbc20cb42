"""Methods that answer from retrieved passages: `naive` (dense chunk RAG), `hybrid` (BM25 + dense)
and `ppr` (HippoRAG-style personalized PageRank over entities and passages)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from thinkgraph.config import RetrievalSettings
from thinkgraph.errors import ConfigError
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.synthesis import answer_from_evidence, evidence_only
from thinkgraph.models import Answer, TraceStep
from thinkgraph.retrieval.dense import DenseRetriever
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.hybrid import HYBRID_DENSE_WEIGHT, HybridRetriever


@dataclass
class PassageMethod:
    """Retrieve passages, then answer from them (or return the evidence when no LLM is set)."""

    name: str
    ctx: MethodContext
    retriever: DenseRetriever | HybridRetriever | GraphRetriever
    top_k: int

    async def answer(self, question: str) -> Answer:
        started = time.perf_counter()
        evidence = self.retriever.retrieve(question, self.top_k)
        outputs: dict[str, object] = {"passages": [p.chunk_id for p in evidence.passages],
                                      "seeds": [s[1] for s in evidence.seeds]}
        if evidence.residual_question is not None:
            outputs["second_hop_question"] = evidence.residual_question
        if evidence.chained_passage is not None:
            outputs["chained_passage"] = evidence.chained_passage
        trace = [TraceStep(agent="retriever", action=f"retrieve.{self.retriever.name}",
                           inputs={"question": question, "top_k": self.top_k}, outputs=outputs,
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


def hybrid_method(ctx: MethodContext, top_k: int | None = None,
                  dense_weight: float = HYBRID_DENSE_WEIGHT) -> PassageMethod:
    return PassageMethod("hybrid", ctx, HybridRetriever(ctx.view, dense_weight), top_k or ctx.settings.retrieval.top_k)


def ppr_method(ctx: MethodContext, top_k: int | None = None, **options: Any) -> PassageMethod:
    """``options`` override ``[retrieval]`` settings for this call (``-m ppr:lexical=false``)."""
    try:
        settings = RetrievalSettings.model_validate(ctx.settings.retrieval.model_dump() | options)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"ppr option {'.'.join(map(str, first['loc']))}: {first['msg']}") from exc
    return PassageMethod("ppr", ctx, GraphRetriever(ctx.view, settings), top_k or settings.top_k)
