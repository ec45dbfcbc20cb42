"""The paper's retrieval baselines on a typed graph (§5): text RAG (the texts of the nodes most
similar to the question) and graph RAG (the same nodes with their one-hop neighbours). Zero-shot is
the `none` method."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.kgr.method import typed_graph_for
from thinkgraph.methods.kgr.prompts import KG_RAG_ANSWER
from thinkgraph.methods.run import llm_required_error
from thinkgraph.models import Answer, AnswerStatus, EvidenceSubgraph, Node, TraceStep
from thinkgraph.typedkg import TypedGraph

MAX_FEATURE_CHARS = 600
MAX_NEIGHBORS_PER_TYPE = 10


def node_block(graph: TypedGraph, node: int, *, neighbors: bool) -> str:
    features = json.dumps(graph.features(node), ensure_ascii=False)[:MAX_FEATURE_CHARS]
    lines = [f"{graph.ext_id(node)} ({graph.node_type(node)}): {features}"]
    if neighbors:
        for edge_type in graph.edge_types_of(node):
            around = graph.neighbors(node, edge_type)
            names = [graph.text(int(n)) for n in around[:MAX_NEIGHBORS_PER_TYPE]]
            more = f" (+{len(around) - len(names)} more)" if len(around) > len(names) else ""
            lines.append(f"  {edge_type}: {', '.join(names)}{more}")
    return "\n".join(lines)


class KGRagConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(5, ge=1)  # nodes retrieved for the question


@dataclass
class KGRagMethod:
    ctx: MethodContext
    config: KGRagConfig = field(default_factory=KGRagConfig)
    mode: ClassVar[Literal["text", "graph"]] = "text"

    @property
    def name(self) -> str:
        return f"kg-{self.mode}rag"

    async def answer(self, question: str) -> Answer:
        graph = typed_graph_for(self.ctx)
        hits = graph.search(question, self.config.top_k)
        context = "\n".join(node_block(graph, h.node, neighbors=self.mode == "graph") for h in hits)
        nodes = [Node(h.ext_id, graph.node_type(h.node), h.text, {"score": h.score}) for h in hits]
        trace = self.ctx.trace
        trace.append(TraceStep("retriever", f"{self.mode}_rag.retrieve", {"question": question},
                               {"nodes": [h.ext_id for h in hits]}))
        llm = self.ctx.llm
        if llm is None:  # (the run envelope says so first)
            raise llm_required_error(self.name)
        prompt = KG_RAG_ANSWER.format(context=context or "(none)", question=question)
        reply = (await llm.text([{"role": "user", "content": prompt}], step=f"kg.{self.mode}_rag",
                                kind="answer")).strip()
        trace.append(TraceStep("responder", f"{self.mode}_rag.answer", {}, {"reply": reply}))
        status = AnswerStatus.ABSTAINED if reply.strip(".").casefold() == "unknown" else AnswerStatus.ANSWERED
        return Answer(question=question, method=self.name, text=reply, status=status,
                      evidence=EvidenceSubgraph(nodes=nodes), trace=trace)


class KGTextRAGMethod(KGRagMethod):
    mode = "text"


class KGGraphRAGMethod(KGRagMethod):
    mode = "graph"
