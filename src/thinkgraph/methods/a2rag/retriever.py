"""The agentic retriever: state <q, S_V, S_R, E>, local -> bridge -> PPR escalation with a
sufficiency check after each stage, every stage at most once (§III-C.4)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from pydantic import BaseModel

from thinkgraph.errors import LLMUnavailableError, StructuredOutputError
from thinkgraph.llm.service import LLM
from thinkgraph.methods.a2rag.config import A2RAGConfig
from thinkgraph.methods.a2rag.graph import EntityGraph, Fact, build_entity_graph
from thinkgraph.methods.a2rag.prompts import SUFFICIENCY
from thinkgraph.methods.a2rag.seeds import SeedAligner, Seeds
from thinkgraph.methods.a2rag.stages import bridge_facts, local_facts, ppr_map_back
from thinkgraph.models import NodeType, TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage, passages_from_scores
from thinkgraph.retrieval.views import IndexView

STAGES = ("local", "bridge", "ppr")
DENSE_FALLBACK = "dense_fallback"  # stage 3 without any seed in the graph: dense retrieval over chunks
SUFFICIENCY_STEP = "a2rag.sufficiency"


class SufficiencyVerdict(BaseModel):
    sufficient: bool
    missing: str = ""


@dataclass
class RetrievalState:
    query: str
    seeds: Seeds = field(default_factory=Seeds)
    facts: list[Fact] = field(default_factory=list)
    stage_chunks: dict[str, list[str]] = field(default_factory=dict)  # stage -> chunks, best first
    stage: str = "none"  # the last stage run
    sufficient: bool = False
    trace: list[TraceStep] = field(default_factory=list)

    def ranked_chunks(self, through: str | None = None) -> list[str]:
        """Chunks of the stages run (up to ``through``), interleaved stage by stage so that each
        stage contributes its best."""
        last = STAGES.index(through) + 1 if through else len(STAGES)
        lists = [self.stage_chunks[s] for s in STAGES[:last] if s in self.stage_chunks]
        out: list[str] = []
        seen: set[str] = set()
        for rank in range(max((len(x) for x in lists), default=0)):
            for chunks in lists:
                if rank < len(chunks) and chunks[rank] not in seen:
                    seen.add(chunks[rank])
                    out.append(chunks[rank])
        return out


class AgenticRetriever:
    def __init__(self, view: IndexView, config: A2RAGConfig, llm: LLM | None = None,
                 graph: EntityGraph | None = None) -> None:
        self.view = view
        self.config = config
        self.llm = llm
        self._graph = graph

    @cached_property
    def graph(self) -> EntityGraph:
        return self._graph or build_entity_graph(self.view)

    @cached_property
    def aligner(self) -> SeedAligner:
        return SeedAligner(self.view, self.graph, self.config, self.llm)

    def triples_text(self, facts: list[Fact]) -> list[str]:
        names = self.graph.names
        return [f"({names[f.subject]}, {f.predicate}, {names[f.object]})" for f in facts[: self.config.max_triples]]

    def passages(self, chunk_ids: list[str]) -> list[ScoredPassage]:
        return passages_from_scores(self.view.store, [(c, 0.0) for c in chunk_ids])

    def _rank_by_query(self, chunk_ids: set[str], query_vec: np.ndarray) -> list[str]:
        vectors = self.view.vectors(NodeType.CHUNK)
        scored = [(c, float(vectors.vectors[vectors.position[c]] @ query_vec)) for c in chunk_ids
                  if c in vectors.position]
        return [c for c, _ in sorted(scored, key=lambda t: (-t[1], t[0]))]

    async def retrieve(self, query: str, *, stop_when_sufficient: bool = True,
                       trace: list[TraceStep] | None = None) -> RetrievalState:
        """The stages for ``query``; each step is recorded on ``trace`` (the question's, so that it is
        heard as it happens) or on a list of the state's own."""
        state = RetrievalState(query=query, trace=[] if trace is None else trace)
        started = time.perf_counter()
        state.seeds = await self.aligner.seeds(query)
        seeds = list(state.seeds.entities)
        if state.seeds.extraction_error is not None:  # traced, and counted by the method
            state.trace.append(TraceStep("retriever", "seeds.extraction_failed", {"query": query},
                                         {"error": state.seeds.extraction_error}))
        state.trace.append(TraceStep("retriever", "seeds", {"query": query}, {
            "mentions": state.seeds.mentions, "entities": [self.graph.names[s] for s in seeds],
            "relations": sorted(state.seeds.relations), "source": state.seeds.source},
            seconds=time.perf_counter() - started))
        query_vec = self.view.embed_query(query)
        for stage in STAGES:
            started = time.perf_counter()
            outputs = self._run_stage(stage, state, seeds, query_vec)
            # no seed reached the graph: stage 3 grounded on the text instead, a stage of its own in
            # the Fig. 4 breakdown (its chunks keep stage 3's slot in the ranking)
            state.stage = DENSE_FALLBACK if outputs.get("dense_fallback") else stage
            state.trace.append(TraceStep("retriever", f"stage.{state.stage}", {"seeds": len(seeds)}, outputs,
                                         seconds=time.perf_counter() - started))
            last = stage == STAGES[-1]  # nothing to escalate to: no check after the last stage
            if stop_when_sufficient and not last and await self._sufficient(state):
                state.sufficient = True
                break
        return state

    def _run_stage(self, stage: str, state: RetrievalState, seeds: list[int],
                   query_vec: np.ndarray) -> dict[str, Any]:
        c = self.config
        outputs: dict[str, Any]
        if stage == "local":
            facts, filtered = local_facts(self.graph, seeds, state.seeds.relations)
            new = facts
            outputs = {"facts": len(facts), "relation_filtered": filtered}
        elif stage == "bridge":
            bridges, paths, new = bridge_facts(self.graph, seeds, c.k_hops, c.max_paths_per_pair, c.max_bridges)
            outputs = {"bridges": [self.graph.names[b] for b in bridges], "paths": len(paths), "facts": len(new)}
        else:
            top, chunk_scores = ppr_map_back(self.graph, seeds, c.alpha, c.top_l)
            if not top:  # no seed reached the graph: ground on the text directly
                hits = self.view.vectors(NodeType.CHUNK).search(query_vec, c.top_l)
                chunk_scores = {cid: score for cid, score in hits}
            ranked = [cid for cid, _ in sorted(chunk_scores.items(), key=lambda t: (-t[1], t[0]))]
            state.stage_chunks[stage] = ranked
            return {"top_nodes": [self.graph.names[n] for n in top[:10]], "chunks": len(ranked),
                    "dense_fallback": not top}
        known = set(state.facts)
        state.facts.extend(f for f in new if f not in known)
        chunk_ids = {cid for f in new for cid in f.chunks}
        state.stage_chunks[stage] = self._rank_by_query(chunk_ids, query_vec)
        outputs["chunks"] = len(state.stage_chunks[stage])
        return outputs

    def evidence_text(self, state: RetrievalState) -> str:
        passages = self.passages(state.ranked_chunks()[: self.config.evidence_chunks])
        triples = "\n".join(self.triples_text(state.facts)) or "(none)"
        body = "\n".join(f"[{i}] {p.title + ': ' if p.title else ''}{p.text}" for i, p in enumerate(passages, 1))
        return f"Facts:\n{triples}\n\nPassages:\n{body or '(none)'}"

    async def _sufficient(self, state: RetrievalState) -> bool:
        if self.llm is None or self.config.sufficiency == "all":
            return False
        if not state.facts and not state.stage_chunks.get(state.stage):
            return False
        prompt = SUFFICIENCY.format(question=state.query, evidence=self.evidence_text(state))
        try:
            verdict = await self.llm.json([{"role": "user", "content": prompt}], SufficiencyVerdict,
                                          step=SUFFICIENCY_STEP, kind="verdict")
        except StructuredOutputError:
            return False  # unsure: escalate (the failure is counted by the LLM layer)
        except LLMUnavailableError:
            raise
        state.trace.append(TraceStep("retriever", f"sufficiency.{state.stage}", {},
                                     {"sufficient": verdict.sufficient, "missing": verdict.missing}))
        return verdict.sufficient
