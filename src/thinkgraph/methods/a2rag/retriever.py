"""The agentic retriever: state <q, S_V, S_R, E>, local -> bridge -> PPR escalation with a
sufficiency judgement after each stage on what that stage found, every stage at most once (§III-C.4)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from thinkgraph.config import RetrievalSettings
from thinkgraph.llm.service import LLM
from thinkgraph.methods.a2rag.config import A2RAGConfig
from thinkgraph.methods.a2rag.graph import STRUCTURAL_PREDICATES, EntityGraph, Fact, build_entity_graph
from thinkgraph.methods.a2rag.seeds import SeedAligner, Seeds, SeedVocabulary
from thinkgraph.methods.a2rag.stages import bridge_facts, connects, local_facts, ppr_map_back
from thinkgraph.methods.layout import Notes, evidence_block
from thinkgraph.methods.reader import numbered_passages
from thinkgraph.models import NodeType, TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage, passages_from_scores
from thinkgraph.retrieval.fusion import fuse_ranks, interleaved
from thinkgraph.retrieval.hybrid import text_scores
from thinkgraph.retrieval.seeded_walk import SeededWalk, WalkScores
from thinkgraph.retrieval.views import IndexView

STAGES = ("local", "bridge", "ppr")
DENSE_FALLBACK = "dense_fallback"  # stage 3 without any seed in the graph: dense retrieval over chunks
ENTITY_GRAPH_MEMO = "a2rag.entity_graph"
SEED_VOCABULARY_MEMO = "a2rag.seed_vocabulary"
FACTS_TITLE = "Facts from the knowledge graph (subject, relation, object)"
SEEDS_TITLE = "The question's entities each passage names"  # (reached seeds too; the measured wording)


@dataclass
class RetrievalState:
    query: str
    seeds: Seeds = field(default_factory=Seeds)
    facts: list[Fact] = field(default_factory=list)
    stage_chunks: dict[str, list[str]] = field(default_factory=dict)  # stage -> chunks, best first
    stage: str = "none"  # the last stage run
    sufficient: bool = False
    trace: list[TraceStep] = field(default_factory=list)
    # the shared walk's score of every chunk (when a named alternative or the pre-check needs it)
    walk: WalkScores | None = None
    walk_seeded: bool = False  # whether the shared walk had a seed (else it ranked by the text alone)
    order: str = "stage"  # evidence_order: how the stages' chunks are handed on
    draft: str | None = None  # sufficiency="answer": the draft that judged the last stage sufficient
    draft_checked: bool = False  # sufficiency="verified": that draft already passed Triple-Check
    # names an abstaining draft's reasoning reached (set by the judge; config ``seeds_from_draft``)
    reached: list[str] = field(default_factory=list)
    fresh_seeds: list[int] = field(default_factory=list)  # seeds taken from them whose facts no stage read
    reached_seeds: list[int] = field(default_factory=list)  # every seed taken from them (stage_chunk_order)
    shown_facts: list[str] = field(default_factory=list)  # the facts the latest draft's prompt showed

    def ranked_chunks(self, through: str | None = None) -> list[str]:
        """Chunks of the stages run (up to ``through``): "stage", the latest stage's by its own scores,
        then the earlier stages' (the evidence carried in the state), each in its own order;
        "interleaved", stage by stage, each stage's best first; "shared_walk", all of them sorted by the
        shared walk's score."""
        last = STAGES.index(through) + 1 if through else len(STAGES)
        lists = [self.stage_chunks[s] for s in reversed(STAGES[:last]) if s in self.stage_chunks]
        walk = self.walk
        if self.order == "shared_walk" and walk is not None:
            return walk.rank(dict.fromkeys(c for chunks in lists for c in chunks))
        if self.order == "interleaved":
            return interleaved(lists[::-1])  # (the earliest stage first at each rank, as before)
        return list(dict.fromkeys(c for chunks in lists for c in chunks))


# Decides after a stage whether the evidence suffices (the controller's answer draft or verdict).
Judge = Callable[[RetrievalState], Awaitable[bool]]


class AgenticRetriever:
    def __init__(self, view: IndexView, config: A2RAGConfig, llm: LLM | None = None,
                 graph: EntityGraph | None = None, walk_settings: RetrievalSettings | None = None) -> None:
        """``walk_settings``: the [retrieval] settings of the shared walk (its named alternatives)."""
        self.view = view
        self.config = config
        self.llm = llm
        self._graph = graph
        self.walk_settings = walk_settings or RetrievalSettings()

    @cached_property
    def graph(self) -> EntityGraph:
        """The given graph (a degraded copy in the extraction-loss test), or the view's, built once."""
        return self._graph or self.view.memo(ENTITY_GRAPH_MEMO, lambda: build_entity_graph(self.view))

    @cached_property
    def aligner(self) -> SeedAligner:
        """Aligns against a vocabulary derived once per view (a given graph: once per retriever)."""
        vocabulary = SeedVocabulary(self.view, self.graph) if self._graph is not None else \
            self.view.memo(SEED_VOCABULARY_MEMO, lambda: SeedVocabulary(self.view, self.graph))
        return SeedAligner(self.view, vocabulary, self.config, self.llm)

    @property
    def needs_walk(self) -> bool:
        """Whether a named alternative (or the pre-check) reads the shared walk."""
        c = self.config
        return c.stage3 == "shared_walk" or c.evidence_order == "shared_walk" or c.sufficiency_precheck > 0

    def triples_text(self, facts: list[Fact], limit: int | None = -1) -> list[str]:
        """The facts as triples, the first ``max_triples`` (``limit=-1``), ``limit`` or (None) all."""
        names = self.graph.names
        shown = facts[: self.config.max_triples if limit == -1 else limit]
        return [f"({names[f.subject]}, {f.predicate}, {names[f.object]})" for f in shown]

    def prompt_facts(self, state: RetrievalState) -> list[Fact]:
        """The facts a prompt shows beside the passages: relations (co-occurrence and synonym links are
        structure, not statements) from the passages shown first, then the others, ``max_triples`` in all."""
        shown = set(state.ranked_chunks()[: self.config.evidence_chunks])
        stated = [f for f in state.facts if f.predicate not in STRUCTURAL_PREDICATES]
        if not stated or not self.config.max_triples:
            return []
        names = self.graph.names
        texts = [f"{names[f.subject]} {f.predicate} {names[f.object]}" for f in stated]
        cosine = self.view.embedder.embed(texts) @ self.view.embed_query(state.query)
        order = sorted(range(len(stated)),
                       key=lambda i: (not shown.intersection(stated[i].chunks), -float(cosine[i]), i))
        return [stated[i] for i in order[: self.config.max_triples]]

    def passages(self, chunk_ids: list[str]) -> list[ScoredPassage]:
        return passages_from_scores(self.view.store, [(c, 0.0) for c in chunk_ids])

    def _rank_by_query(self, chunk_ids: set[str], query_vec: np.ndarray) -> list[str]:
        """The chunks that have a vector, nearest the query first."""
        ids = sorted(chunk_ids)
        cosine = self.view.vectors(NodeType.CHUNK).cosines(ids, query_vec)
        scored = [(c, float(x)) for c, x in zip(ids, cosine, strict=True) if np.isfinite(x)]
        return [c for c, _ in sorted(scored, key=lambda t: (-t[1], t[0]))]

    def _walk(self, state: RetrievalState, query_vec: np.ndarray) -> None:
        """The shared walk (``ppr``'s: entities and passages, its passage prior and second hop) started
        from the seeds S_V, over every passage; without any seed it is the hybrid text ranking."""
        chunks = self.view.vectors(NodeType.CHUNK)
        seeds = {self.graph.ids[row]: weight for row, weight in state.seeds.entities.items()}
        ranking = SeededWalk(self.view, self.walk_settings, seeds).passage_ranking(state.query, query_vec)
        state.walk = WalkScores(chunks.ids, chunks.position, ranking.scores)
        state.walk_seeded = bool(ranking.seeds)

    async def retrieve(self, query: str, *, judge: Judge | None = None, trace: list[TraceStep] | None = None,
                       judge_unchanged: bool = False) -> RetrievalState:
        """The stages for ``query``, each judged by ``judge`` before the next (none: every stage); a
        stage that changed nothing the judge sees is not judged again unless ``judge_unchanged``. Each
        step is recorded on ``trace`` (the question's, so that it is heard as it happens) or on a
        list of the state's own."""
        state = RetrievalState(query=query, trace=[] if trace is None else trace)
        started = time.perf_counter()
        state.seeds = await self.aligner.seeds(query)
        seeds = list(state.seeds.entities)
        if state.seeds.extraction_error is not None:  # traced, and counted by the method
            state.trace.append(TraceStep("retriever", "seeds.extraction_failed", {"query": query},
                                         {"error": state.seeds.extraction_error}))
        state.trace.append(TraceStep("retriever", "seeds", {"query": query}, {
            "mentions": state.seeds.mentions, "entities": [self.graph.names[s] for s in seeds],
            "relations": sorted(state.seeds.relations), "source": state.seeds.source,
            "linked": state.seeds.linked, "values": state.seeds.values}, seconds=time.perf_counter() - started))
        query_vec = self.view.embed_query(query)
        state.order = self.config.evidence_order
        if self.needs_walk:
            self._walk(state, query_vec)
        for stage in self.stages:
            started = time.perf_counter()
            before = (len(state.facts), set(state.ranked_chunks()[: self.config.evidence_chunks]))
            outputs = self._run_stage(stage, state, seeds, query_vec)
            # a stage that changed neither the facts nor the passages shown cannot change the judgement
            changed = before != (len(state.facts), set(state.ranked_chunks()[: self.config.evidence_chunks]))
            # no seed reached the graph: stage 3 grounded on the text instead, a stage of its own in
            # the Fig. 4 breakdown (its chunks keep stage 3's slot in the ranking)
            state.stage = DENSE_FALLBACK if outputs.get("dense_fallback") else stage
            state.trace.append(TraceStep("retriever", f"stage.{state.stage}", {"seeds": len(seeds)}, outputs,
                                         seconds=time.perf_counter() - started))
            last = stage == self.stages[-1]  # nothing to escalate to: no judgement after the last stage
            if judge is None or last or not (changed or judge_unchanged):
                continue
            if self._seeds_apart(stage, state, seeds):
                continue
            if await judge(state):
                state.sufficient = True
                break
            seeds += self._seeds_reached(state, seeds, stage)
        return state

    def _seeds_reached(self, state: RetrievalState, seeds: list[int], stage: str) -> list[int]:
        """The entities of the index that the stage's abstaining draft reached and the seeds lack, each name
        linked as the question's are (config ``retrieval``), up to ``max_seeds`` seeds in all (config
        ``seeds_from_draft``): the next stages start from them too (traced as "seeds.reached")."""
        names, state.reached = state.reached, []
        if not self.config.seeds_from_draft or not names:
            return []
        found: dict[int, float] = {}
        for name in names:
            for row, weight in self._linked(name):
                if row not in seeds:
                    found[row] = max(found.get(row, 0.0), weight)
        room = max(self.config.max_seeds - len(seeds), 0)
        fresh = [row for row, _ in sorted(found.items(), key=lambda kv: -kv[1])[:room]]
        for row in fresh:
            state.seeds.entities[row] = found[row]
        state.fresh_seeds += fresh
        state.reached_seeds += fresh
        state.trace.append(TraceStep("retriever", "seeds.reached", {"stage": stage, "names": names},
                                     {"entities": [self.graph.names[r] for r in fresh]}))
        return fresh

    def _linked(self, name: str) -> list[tuple[int, float]]:
        """A name's entities: the index's entity of that name ("shared"), else the hybrid matcher's best."""
        if self.config.retrieval == "shared":
            return [(row, link.confidence) for link in self.view.entity_linker.link(name)
                    if (row := self.graph.index.get(link.entity_id)) is not None]
        return self.aligner.align_entity(name)[:1]

    def _seeds_apart(self, stage: str, state: RetrievalState, seeds: list[int]) -> bool:
        """Stage 1's structural condition (``local_connects_seeds``): facts that leave two or more seeds
        apart are insufficient without a judgement, traced as the stage's sufficiency."""
        if stage != "local" or not self.config.local_connects_seeds or connects(state.facts, seeds):
            return False
        state.trace.append(TraceStep("retriever", "sufficiency.local", {"check": "connects_seeds"},
                                     {"sufficient": False, "seeds_apart": [self.graph.names[s] for s in seeds]}))
        return True

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages that run, in order (``local_bridge`` off: stage 3 alone)."""
        return STAGES if self.config.local_bridge else STAGES[-1:]

    def _run_stage(self, stage: str, state: RetrievalState, seeds: list[int],
                   query_vec: np.ndarray) -> dict[str, Any]:
        c = self.config
        outputs: dict[str, Any]
        if stage == "ppr":
            return self._global_stage(state, seeds, query_vec)
        if stage == "local":
            new, filtered = local_facts(self.graph, seeds, state.seeds.relations)
            outputs = {"facts": len(new), "relation_filtered": filtered}
        else:
            bridges, paths, new = bridge_facts(self.graph, seeds, c.k_hops, c.max_paths_per_pair, c.max_bridges,
                                               state.seeds.relations)
            outputs = {"bridges": [self.graph.names[b] for b in bridges], "paths": len(paths), "facts": len(new)}
            if state.fresh_seeds:  # stage 1 never read the reached seeds' own facts: this stage does
                own, _ = local_facts(self.graph, state.fresh_seeds, set())
                read = set(own)
                new = own + [f for f in new if f not in read]
                outputs["reached_seed_facts"] = len(own)
        state.fresh_seeds = []
        known = set(state.facts)
        state.facts.extend(f for f in new if f not in known)
        chunk_ids = {cid for f in new for cid in f.chunks}
        state.stage_chunks[stage] = self._rank(chunk_ids, state, query_vec)
        outputs["chunks"] = len(state.stage_chunks[stage])
        return outputs

    def _rank(self, chunk_ids: set[str], state: RetrievalState, query_vec: np.ndarray) -> list[str]:
        """A stage 1-2 chunk set in the stage's own order (``stage_chunk_order``; the paper hands these
        stages' triples on and leaves their chunks' order open), or by the walk (evidence_order)."""
        if state.order == "shared_walk" and state.walk is not None:
            return state.walk.rank(chunk_ids)
        if self.config.stage_chunk_order == "cosine":
            return self._rank_by_query(chunk_ids, query_vec)
        return self._rank_by_text(chunk_ids, state, query_vec)

    def _rank_by_text(self, chunk_ids: set[str], state: RetrievalState, query_vec: np.ndarray) -> list[str]:
        """The chunks that have a vector by the hybrid text score (retrieval/hybrid.py ``text_scores``, with
        the ``[retrieval]`` settings' ``lexical`` and ``dense_weight``), BM25 reading the query with the
        names the stages' drafts reached."""
        ids = sorted(chunk_ids)
        words = " ".join([state.query, *(self.graph.names[r] for r in state.reached_seeds)])
        text = text_scores(self.view, state.query, ids, query_vec, words=words, lexical=self.walk_settings.lexical,
                           dense_weight=self.walk_settings.dense_weight)
        return [ids[i] for i in sorted((i for i in range(len(ids)) if np.isfinite(text[i])),
                                       key=lambda i: (-float(text[i]), ids[i]))]

    def _global_stage(self, state: RetrievalState, seeds: list[int], query_vec: np.ndarray) -> dict[str, Any]:
        """Stage 3: (paper) eqs. 9-12, PPR from the seeds with p0 proportional to 1/deg and map-back of
        the top-L nodes, or the shared walk from the same seeds (stage3="shared_walk"), its top-L
        passages. Without a seed in the graph the text is searched directly."""
        c = self.config
        if c.stage3 == "shared_walk" and state.walk is not None:
            ranked = state.walk.best(c.top_l)
            state.stage_chunks["ppr"] = ranked
            return {"form": "shared_walk", "chunks": len(ranked), "dense_fallback": not state.walk_seeded}
        top, chunk_scores = ppr_map_back(self.graph, seeds, c.alpha, c.top_l)
        if not top:  # no seed reached the graph: ground on the text directly
            hits = self.view.vectors(NodeType.CHUNK).search(query_vec, c.top_l)
            chunk_scores = {cid: score for cid, score in hits}
        ranked = [cid for cid, _ in sorted(chunk_scores.items(), key=lambda t: (-t[1], t[0]))]
        if top and c.stage3_order == "fused":
            ranked = self._fused(ranked, chunk_scores, query_vec)
        filled = self._text_fill(ranked, query_vec) if top and c.stage3_fill else []
        state.stage_chunks["ppr"] = ranked + filled
        return {"form": "paper", "top_nodes": [self.graph.names[n] for n in top[:10]], "chunks": len(ranked),
                "dense_fallback": not top, "text_fill": len(filled)}

    def _text_fill(self, ranked: list[str], query_vec: np.ndarray) -> list[str]:
        """The passages nearest the query that the map-back set lacks, up to ``evidence_chunks`` in all
        (``stage3_fill``): seeds the graph barely links reach too few chunks to answer from."""
        wanted = self.config.evidence_chunks - len(ranked)
        if wanted <= 0:
            return []
        have = set(ranked)
        hits = self.view.vectors(NodeType.CHUNK).search(query_vec, wanted + len(ranked))
        return [cid for cid, _ in hits if cid not in have][:wanted]

    def _fused(self, ranked: list[str], mass: dict[str, float], query_vec: np.ndarray) -> list[str]:
        """The map-back set (eq. 12) ordered by reciprocal-rank fusion of each chunk's PPR mass and its
        cosine to the query (``stage3_order="fused"``); a chunk without a vector keeps the mass alone."""
        cosine = self.view.vectors(NodeType.CHUNK).cosines(ranked, query_vec)
        fused = fuse_ranks([np.array([mass[c] for c in ranked]), cosine], [1.0, 1.0])
        order = sorted(range(len(ranked)), key=lambda i: (-fused[i], i))
        return [ranked[i] for i in order]

    def evidence_text(self, state: RetrievalState) -> str:
        """The stage's evidence as its draft shows it (methods/layout.py), so that a verdict on it reuses
        the draft's prompt prefix."""
        passages = self.passages(state.ranked_chunks()[: self.config.evidence_chunks])
        facts = self.triples_text(self.prompt_facts(state))
        return evidence_block(numbered_passages(passages), self.notes(state, passages, facts))

    def notes(self, state: RetrievalState, passages: list[ScoredPassage], facts: list[str]) -> list[Notes]:
        """What a prompt shows beside the passages: the seeds each names (``seed_notes``), the facts."""
        return [Notes(SEEDS_TITLE, self.seed_lines(state, passages) if self.config.seed_notes else []),
                Notes(FACTS_TITLE, facts)]

    def seed_lines(self, state: RetrievalState, passages: list[ScoredPassage]) -> list[str]:
        """For each passage that names a seed (the question's, or one an abstaining draft reached), its
        number and those seeds, the strongest first: "[2] Roddy Maude-Roxby, Tom Rowe"."""
        seeds = sorted(state.seeds.entities, key=lambda row: -state.seeds.entities[row])
        lines = []
        for number, passage in enumerate(passages, 1):
            named = set(self.view.passage_entities.entities(passage.chunk_id))
            names = list(dict.fromkeys(self.graph.names[r] for r in seeds if self.graph.ids[r] in named))
            if names:
                lines.append(f"[{number}] {', '.join(names)}")
        return lines
