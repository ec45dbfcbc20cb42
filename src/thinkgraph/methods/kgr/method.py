"""Method `kgr`: LLM reasoning grounded step by step in a knowledge graph, with strategy cot / tot /
got and interaction agent / explore, on an imported typed graph or on the corpus-built index."""

from __future__ import annotations

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
from thinkgraph.methods.run import llm_required_error
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.models import Answer, AnswerStatus, EvidenceSubgraph, Node
from thinkgraph.retrieval.evidence import passages_from_scores
from thinkgraph.typedkg import TypedGraph
from thinkgraph.typedkg.location import open_typed_graph

PASSAGE_TYPE = "passage"  # passage nodes of a corpus-built typed graph carry the chunk text
MENTIONED_IN = "mentioned_in"  # entity -> passage edges of a corpus-built typed graph
MAX_GROUNDING_PASSAGES = 5


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
        if llm is None:  # (the run envelope says so first)
            raise llm_required_error(self.name)
        graph = typed_graph_for(self.ctx)
        recorder = Recorder(self.ctx.trace)
        with llm.meter.limit(self.config.max_calls):
            result = await self._search(llm, graph, question, recorder)
        return self._answer(question, graph, result, recorder)

    def stepper(self, llm: LLM, graph: TypedGraph, question: str, recorder: Recorder, ids: count[int]) -> Stepper:
        c = self.config
        if c.interaction == "agent":
            env = GraphEnvironment(graph, retrieve_k=c.retrieve_k, max_neighbors=c.max_neighbors,
                                   max_chars=c.max_observation_chars)
            return AgentStepper(llm, env, question, recorder, ids, few_shot=c.few_shot, graph_chars=c.graph_chars)
        linker = self.ctx.view.entity_linker if c.entity_linking == "shared" else None
        return ExploreStepper(llm, graph, c, question, recorder, ids, linker=linker)

    async def _search(self, llm: LLM, graph: TypedGraph, question: str, recorder: Recorder) -> SearchResult:
        ids = count(1)
        root = ChainState(0)
        stepper = self.stepper(llm, graph, question, recorder, ids)
        if self.config.strategy == "cot":
            return await run_chain(stepper, root, self.config.steps)
        evaluator = Evaluator(llm, question, self.config.evaluator, recorder, few_shot=self.config.few_shot)
        return await run_tree(stepper, evaluator, root, self.config, merge=self.config.strategy == "got")

    def _answer(self, question: str, graph: TypedGraph, result: SearchResult, recorder: Recorder) -> Answer:
        best = result.best
        nodes = []
        for ext in (best.nodes if best else []):
            node = graph.lookup(ext)
            if node is not None:
                nodes.append(Node(ext, graph.node_type(node), graph.text(node)))
        passages = passages_from_scores(self.ctx.store, [(cid, 0.0) for cid in grounding_passages(graph, nodes)])
        stats = {"outcome": _outcome(result), "states": result.states,
                 "steps": len(best.steps) if best else 0, "invalid_actions": recorder.invalid_actions,
                 "parse_failures": recorder.parse_failures}
        if self.config.strategy == "got":
            stats["merges"] = result.merges
        if result.budget_reached:
            stats["budget_reached"] = True
        if best is not None:
            stats["grounded"] = bool(nodes)
        return Answer(question=question, method=self.name, text=best.answer if best else None,
                      status=AnswerStatus.ANSWERED if best else AnswerStatus.FAILED,
                      citations=citations_for(passages),
                      evidence=EvidenceSubgraph(nodes=nodes, path_texts=[f"{h} -> {r} -> {t}" for h, r, t in
                                                                         (best.triples if best else [])]),
                      trace=recorder.steps,
                      message=self._message(result, bool(nodes)), stats=stats)

    def _message(self, result: SearchResult, grounded: bool) -> str | None:
        c = self.config
        notes = []
        if result.budget_reached:
            notes.append(f"stopped at the call budget (max_calls={c.max_calls})" +
                         ("; the best chain finished before it answers" if result.best else " without a final answer"))
        elif result.best is None:
            notes.append(f"reached the step limit ({c.steps if c.strategy == 'cot' else c.tree_depth}) "
                         "without a final answer")
        if result.best is not None and not grounded:
            notes.append("the reasoning finished without consulting the graph: the answer has no support")
        return "; ".join(notes) or None


def _outcome(result: SearchResult) -> str:
    if result.best is not None:
        return "finished"
    return "budget_reached" if result.budget_reached else "reached_limit"


def grounding_passages(graph: TypedGraph, nodes: list[Node], limit: int = MAX_GROUNDING_PASSAGES) -> list[str]:
    """The passages an answer rests on, on a corpus-built index: the passage nodes the reasoning read,
    then the passages that mention the entities it touched (those mentioning the most of them
    first). An imported KG has no passages, so its answers cite none (its evidence is the nodes)."""
    read = [n.id for n in nodes if n.type == PASSAGE_TYPE]
    counts: dict[str, int] = {}
    for n in nodes:
        node = graph.lookup(n.id) if n.type != PASSAGE_TYPE else None
        if node is None or MENTIONED_IN not in graph.edge_types_of(node):
            continue
        for p in graph.neighbors(node, MENTIONED_IN):
            ext = graph.ext_id(int(p))
            counts[ext] = counts.get(ext, 0) + 1
    mentioned = sorted((p for p in counts if p not in read), key=lambda p: -counts[p])
    return (read + mentioned)[:limit]
