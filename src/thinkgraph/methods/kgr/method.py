"""Method `kgr`: LLM reasoning grounded step by step in a knowledge graph, with strategy cot / tot /
got and interaction agent / explore, on an imported typed graph or on the corpus-built index."""

from __future__ import annotations

import time
from itertools import count

from thinkgraph.errors import ConfigError
from thinkgraph.llm.service import LLM
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.kgr.actions import GraphEnvironment
from thinkgraph.methods.kgr.agent import AgentStepper
from thinkgraph.methods.kgr.config import KGRConfig
from thinkgraph.methods.kgr.explore import ExploreStepper
from thinkgraph.methods.kgr.search import Evaluator, SearchResult, Stepper, run_chain, run_tree
from thinkgraph.methods.kgr.state import ChainState
from thinkgraph.methods.kgr.trace import Recorder
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.models import Answer, EvidenceSubgraph, Node
from thinkgraph.retrieval.evidence import passages_from_scores
from thinkgraph.typedkg import TypedGraph
from thinkgraph.typedkg.location import open_typed_graph

PASSAGE_TYPE = "passage"  # passage nodes of a corpus-built typed graph carry the chunk text


def typed_graph_for(ctx: MethodContext) -> TypedGraph:
    path = getattr(ctx.store, "path", None)
    if path is None:
        raise ConfigError("kgr needs an index stored on disk")
    return open_typed_graph(ctx.store, path, ctx.view.embedder)


class KGRMethod:
    name = "kgr"

    def __init__(self, ctx: MethodContext, config: KGRConfig) -> None:
        self.ctx = ctx
        self.config = config

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:
            raise ConfigError("method 'kgr' needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")
        graph = typed_graph_for(self.ctx)
        started = time.perf_counter()
        recorder = Recorder()
        with llm.meter.scope() as cost:
            result = await self._search(llm, graph, question, recorder)
        cost.seconds = time.perf_counter() - started
        return self._answer(question, graph, result, recorder, cost)

    def stepper(self, llm: LLM, graph: TypedGraph, question: str, recorder: Recorder, ids: count) -> Stepper:
        c = self.config
        if c.interaction == "agent":
            env = GraphEnvironment(graph, retrieve_k=c.retrieve_k, max_neighbors=c.max_neighbors,
                                   max_chars=c.max_observation_chars)
            return AgentStepper(llm, env, question, recorder, ids)
        return ExploreStepper(llm, graph, c, question, recorder, ids)

    async def _search(self, llm: LLM, graph: TypedGraph, question: str, recorder: Recorder) -> SearchResult:
        ids = count(1)
        root = ChainState(0)
        stepper = self.stepper(llm, graph, question, recorder, ids)
        if self.config.strategy == "cot":
            return await run_chain(stepper, root, self.config.steps)
        evaluator = Evaluator(llm, question, self.config.evaluator, recorder)
        return await run_tree(stepper, evaluator, root, self.config, merge=self.config.strategy == "got")

    def _answer(self, question: str, graph: TypedGraph, result: SearchResult, recorder: Recorder,
                cost: object) -> Answer:
        c = self.config
        best = result.best
        nodes = []
        for ext in (best.nodes if best else []):
            node = graph.lookup(ext)
            if node is not None:
                nodes.append(Node(ext, graph.node_type(node), graph.text(node)))
        chunks = [n.id for n in nodes if n.type == PASSAGE_TYPE]
        passages = passages_from_scores(self.ctx.store, [(cid, 0.0) for cid in chunks])
        stats = {"outcome": "finished" if best else "reached_limit", "states": result.states,
                 "steps": len(best.steps) if best else 0, "invalid_actions": recorder.invalid_actions,
                 "parse_failures": recorder.parse_failures}
        if c.strategy == "got":
            stats["merges"] = result.merges
        limit = c.steps if c.strategy == "cot" else c.tree_depth
        return Answer(question=question, method=self.name, text=best.answer if best else None,
                      status="answered" if best else "failed", citations=citations_for(passages),
                      evidence=EvidenceSubgraph(nodes=nodes, path_texts=[f"{h} -> {r} -> {t}" for h, r, t in
                                                                         (best.triples if best else [])]),
                      trace=recorder.steps, cost=cost,  # type: ignore[arg-type]
                      message=None if best else f"reached the step limit ({limit}) without a final answer",
                      stats=stats)
