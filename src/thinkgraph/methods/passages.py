"""Methods that answer from retrieved passages: `naive` (dense chunk RAG), `hybrid` (BM25 + dense)
and `ppr` (HippoRAG-style personalized PageRank over entities and passages)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from thinkgraph.config import RetrievalSettings
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.synthesis import answer_from_evidence, evidence_only
from thinkgraph.models import Answer, TraceStep
from thinkgraph.retrieval.dense import DenseRetriever
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.hybrid import HYBRID_DENSE_WEIGHT, HybridRetriever


class NaiveConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int | None = Field(None, ge=1)  # passages retrieved; None: [retrieval] top_k


class HybridConfig(NaiveConfig):
    dense_weight: float = Field(HYBRID_DENSE_WEIGHT, ge=0.0, le=1.0)  # of the dense ranking in the fusion


class PPRConfig(RetrievalSettings):
    """The [retrieval] settings, each overridable per question (``-m ppr:lexical=false``): the
    catalog builds it from the configured section, then the options."""


async def answer_from_passages(ctx: MethodContext, name: str, retriever: DenseRetriever | HybridRetriever |
                               GraphRetriever, top_k: int, question: str) -> Answer:
    """Retrieve passages, then answer from them (or return the evidence when no LLM is set)."""
    started = time.perf_counter()
    evidence = retriever.retrieve(question, top_k)
    outputs: dict[str, object] = {"passages": [p.chunk_id for p in evidence.passages],
                                  "seeds": [s[1] for s in evidence.seeds]}
    if evidence.residual_question is not None:
        outputs["second_hop_question"] = evidence.residual_question
    if evidence.chained_passage is not None:
        outputs["chained_passage"] = evidence.chained_passage
    if evidence.walk is not None:
        outputs["walk"] = evidence.walk
    ctx.trace.append(TraceStep(agent="retriever", action=f"retrieve.{retriever.name}",
                               inputs={"question": question, "top_k": top_k}, outputs=outputs,
                               seconds=time.perf_counter() - started))
    if ctx.llm is None:
        return evidence_only(question, name, evidence, ctx.trace)
    return await answer_from_evidence(ctx.llm, question, name, evidence, ctx.trace)


@dataclass
class NaiveMethod:
    ctx: MethodContext
    config: NaiveConfig = field(default_factory=NaiveConfig)
    name: str = "naive"

    async def answer(self, question: str) -> Answer:
        top_k = self.config.top_k or self.ctx.settings.retrieval.top_k
        return await answer_from_passages(self.ctx, self.name, DenseRetriever(self.ctx.view), top_k, question)


@dataclass
class HybridMethod:
    ctx: MethodContext
    config: HybridConfig = field(default_factory=HybridConfig)
    name: str = "hybrid"

    async def answer(self, question: str) -> Answer:
        top_k = self.config.top_k or self.ctx.settings.retrieval.top_k
        retriever = HybridRetriever(self.ctx.view, self.config.dense_weight)
        return await answer_from_passages(self.ctx, self.name, retriever, top_k, question)


@dataclass
class PPRMethod:
    ctx: MethodContext
    config: PPRConfig = field(default_factory=PPRConfig)
    name: str = "ppr"

    async def answer(self, question: str) -> Answer:
        retriever = GraphRetriever(self.ctx.view, self.config)
        return await answer_from_passages(self.ctx, self.name, retriever, self.config.top_k, question)
