"""Method `kgr`: LLM reasoning grounded step by step in a knowledge graph, with strategy cot / tot /
got and interaction agent / explore, on an imported typed graph or on the corpus-built index."""

from __future__ import annotations

from itertools import count

import numpy as np

from thinkgraph.errors import ConfigError
from thinkgraph.llm.service import LLM
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.kgr.actions import GraphEnvironment
from thinkgraph.methods.kgr.agent import AgentStepper
from thinkgraph.methods.kgr.config import KGRConfig
from thinkgraph.methods.kgr.explore import ExploreStepper
from thinkgraph.methods.kgr.fill import walk_fill
from thinkgraph.methods.kgr.finish import Finisher
from thinkgraph.methods.kgr.grounding import Relevance, chain_nodes, corpus_built, grounding_passages
from thinkgraph.methods.kgr.reading import read_chain
from thinkgraph.methods.kgr.search import Evaluator, SearchResult, Stepper, run_chain, run_tree
from thinkgraph.methods.kgr.state import ChainState
from thinkgraph.methods.kgr.trace import Recorder
from thinkgraph.methods.replies import is_abstention
from thinkgraph.methods.run import llm_required_error
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.models import Answer, AnswerStatus, EvidenceSubgraph, NodeType
from thinkgraph.retrieval.evidence import passages_from_scores
from thinkgraph.retrieval.hybrid import text_scores
from thinkgraph.typedkg import TypedGraph
from thinkgraph.typedkg.location import open_typed_graph


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
        answer = self._answer(question, graph, result, recorder)
        chain = result.best or result.last
        if not self._reads(graph) or chain is None or result.budget_reached:
            return answer
        fill, query = self.config.reader_fill, self.ctx.view.embed_query(question)
        reply = await read_chain(llm, self.ctx.store, graph, question, chain, recorder.steps,
                                 self.config.reader_passages, relevance=self._relevance(question, query),
                                 neighbourhood=fill == "relations",
                                 fill=walk_fill(self.ctx.view, self.ctx.settings.retrieval, graph, question, query,
                                                2 * self.config.reader_passages) if fill == "walk" else None)
        if reply is None:
            return answer
        answer.text, answer.status, answer.citations = reply.text, reply.status, citations_for(reply.cited)
        answer.message = "; ".join(m for m in (answer.message, reply.message) if m) or None
        answer.stats["reader"], answer.stats["reader_fill"] = "shared", fill
        return answer

    def _relevance(self, question: str, query: np.ndarray) -> Relevance:
        """Passages scored against the question (``reader_relevance``; ``query``: its vector): cosine, or
        the hybrid text score among them; a passage without a vector scores lowest."""
        view, settings = self.ctx.view, self.ctx.settings.retrieval
        if self.config.reader_relevance == "cosine":
            vectors = view.vectors(NodeType.CHUNK)
            return lambda ids: vectors.cosines(ids, query).tolist()
        return lambda ids: text_scores(view, question, list(ids), query, lexical=settings.lexical,
                                       dense_weight=settings.dense_weight).tolist()

    def _reads(self, graph: TypedGraph) -> bool:
        """Whether the one reader answers (reader="shared" on a corpus-built graph, which has passages)."""
        return self.config.reader == "shared" and corpus_built(graph)

    def stepper(self, llm: LLM, graph: TypedGraph, question: str, recorder: Recorder, ids: count[int]) -> Stepper:
        c = self.config
        finisher = None
        if c.finish_at_limit and not self._reads(graph):  # the reader answers at the limit too
            finisher = Finisher(llm, graph, self.ctx.store if corpus_built(graph) else None, question, recorder, ids)
        if c.interaction == "agent":
            env = GraphEnvironment(graph, retrieve_k=c.retrieve_k, max_neighbors=c.max_neighbors,
                                   max_chars=c.max_observation_chars,
                                   short_names=c.node_names == "short" and corpus_built(graph))
            recorder.names = env.names
            return AgentStepper(llm, env, question, recorder, ids, few_shot=c.few_shot,
                                graph_chars=c.definition_chars(llm.settings.context_window),
                                limit=c.steps if c.strategy == "cot" else c.tree_depth, finisher=finisher)
        linker = self.ctx.view.entity_linker if c.entity_linking == "shared" else None
        return ExploreStepper(llm, graph, c, question, recorder, ids, linker=linker, finisher=finisher)

    async def _search(self, llm: LLM, graph: TypedGraph, question: str, recorder: Recorder) -> SearchResult:
        ids = count(1)
        root = ChainState(0)
        stepper = self.stepper(llm, graph, question, recorder, ids)
        if self.config.strategy == "cot":
            return await run_chain(stepper, root, self.config.steps,
                                   finish_at_limit=self.config.finish_at_limit and not self._reads(graph),
                                   repair=self.config.repair and self.config.interaction == "agent")
        evaluator = Evaluator(llm, question, self.config.evaluator, recorder, few_shot=self.config.few_shot)
        return await run_tree(stepper, evaluator, root, self.config, merge=self.config.strategy == "got")

    def _answer(self, question: str, graph: TypedGraph, result: SearchResult, recorder: Recorder) -> Answer:
        best = result.best
        chain = best or result.last  # the chain the stats describe: the answer's, or the CoT chain as it ended
        nodes = chain_nodes(graph, best.nodes) if best else []
        final = best.final if best else None
        if final is not None:  # finished at the step limit: it cites the passages its reply cited
            passages, status = list(final.cited), final.status
        else:
            passages = passages_from_scores(self.ctx.store, [(cid, 0.0) for cid in grounding_passages(graph, nodes)])
            status = AnswerStatus.FAILED if best is None else \
                AnswerStatus.ABSTAINED if is_abstention(best.answer or "") else AnswerStatus.ANSWERED
        stats = {"outcome": _outcome(result), "states": result.states,
                 "steps": len(chain.steps) if chain else 0, "invalid_actions": recorder.invalid_actions,
                 "parse_failures": recorder.parse_failures}
        if recorder.repairs:
            stats["repairs"] = recorder.repairs
        if recorder.repeated_actions:
            stats["repeated_actions"] = recorder.repeated_actions
        if self.config.strategy == "got":
            stats["merges"] = result.merges
        if result.budget_reached:
            stats["budget_reached"] = True
        if best is not None:
            stats["grounded"] = bool(nodes)
        return Answer(question=question, method=self.name, text=best.answer if best else None,
                      status=status, citations=citations_for(passages),
                      evidence=EvidenceSubgraph(nodes=nodes, path_texts=[f"{h} -> {r} -> {t}" for h, r, t in
                                                                         (best.triples if best else [])]),
                      trace=recorder.steps,
                      message=self._message(result, bool(nodes)), stats=stats)

    def _message(self, result: SearchResult, grounded: bool) -> str | None:
        c = self.config
        notes = []
        limit = c.steps if c.strategy == "cot" else c.tree_depth
        if result.budget_reached:
            notes.append(f"stopped at the call budget (max_calls={c.max_calls})" +
                         ("; the best chain finished before it answers" if result.best else " without a final answer"))
        elif result.best is None:
            notes.append(f"reached the step limit ({limit}) without a final answer")
            final = result.last.final if result.last else None
            if final is not None and final.message:
                notes.append(f"the finishing step gave none: {final.message}")
        elif result.best.final is not None:
            notes.append(f"answered at the step limit ({limit}) from what the chain found")
            if result.best.final.message:
                notes.append(result.best.final.message)
        if result.best is not None and not grounded:
            notes.append("the reasoning finished without consulting the graph: the answer has no support")
        return "; ".join(notes) or None


FINISHED_AT_LIMIT = "finished_at_limit"  # answered at the step limit (finish_at_limit; eval/taxonomy.py reads it)


def _outcome(result: SearchResult) -> str:
    if result.best is not None:
        return FINISHED_AT_LIMIT if result.best.final is not None else "finished"
    return "budget_reached" if result.budget_reached else "reached_limit"
