"""ToPG Global mode: anchors by iterative Suggestion-Selection with per-node Rocchio queries
(Alg. 2, eqs. 9-11), communities chosen greedily under a node budget (Alg. 3), intermediate
answers per community chunk, ranked and ordered against lost-in-the-middle, then one report."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from pydantic import BaseModel, Field

from thinkgraph.errors import StructuredOutputError
from thinkgraph.graph.budgeted import greedy_budgeted_communities
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.graph.proposition import query_aware_transition
from thinkgraph.llm.service import LLM
from thinkgraph.methods.topg.communities import proposition_communities
from thinkgraph.methods.topg.config import ToPGConfig
from thinkgraph.methods.topg.prompts import DECOMPOSE, INTERMEDIATE, REPORT
from thinkgraph.methods.topg.suggest import Suggester
from thinkgraph.models import TraceStep
from thinkgraph.store.base import GraphStore
from thinkgraph.tokens import TokenCounter

SelectFn = Callable[[str, list[int]], Awaitable[list[int]]]
EnterFn = Callable[[str], list[int]]  # a (sub-)question -> its entry propositions


class SubQuestions(BaseModel):
    questions: list[str] = Field(default_factory=list)


class Intermediate(BaseModel):
    answer: str = ""
    score: int = Field(default=0, ge=0, le=100)


def rocchio(origin: np.ndarray, positive: np.ndarray, negative: np.ndarray | None, *, alpha: float, beta: float,
            gamma: float) -> np.ndarray:
    """q_i = alpha q_o + beta h(u_i) - gamma mean(h(pruned)) (eq. 11), unit-normalised."""
    q = alpha * origin + beta * positive
    if negative is not None:
        q = q - gamma * negative
    norm = np.linalg.norm(q)
    return q / norm if norm > 0 else origin


def lost_in_the_middle(items: list[str]) -> list[str]:
    """Ranked items placed so the best are at both ends: 1st, 3rd, 5th, ..., 6th, 4th, 2nd."""
    return items[0::2] + items[1::2][::-1]


@dataclass
class Origin:
    query: np.ndarray  # the walker query that most likely reached the node
    pruned: np.ndarray | None  # mean embedding of what Select pruned alongside


@dataclass
class GlobalExplorer:
    suggester: Suggester
    config: ToPGConfig
    llm: LLM | None  # None: no decomposition (the question alone seeds), as without an LLM
    select: SelectFn
    embed: Callable[[str], np.ndarray]
    trace: list[TraceStep] = field(default_factory=list)
    origins: dict[int, list[Origin]] = field(default_factory=dict)
    anchors: list[int] = field(default_factory=list)  # s_glb, as collected so far
    enter: EnterFn | None = None  # the entry points (Alg. 2 l. 6); None: SuggestNaive

    @property
    def vectors(self) -> np.ndarray:
        return self.suggester.graph.vectors.vectors

    def _pruned_mean(self, suggested: list[int], kept: list[int]) -> np.ndarray | None:
        pruned = [p for p in suggested if p not in set(kept)]
        return self.vectors[pruned].mean(axis=0) if pruned else None

    def query_for(self, node: int) -> np.ndarray:
        c = self.config
        origins = self.origins[node]
        q_o = np.mean([o.query for o in origins], axis=0)
        if c.feedback == "simple":
            return rocchio(q_o, self.vectors[node], None, alpha=c.rocchio_alpha, beta=0.0, gamma=0.0)
        negatives = [o.pruned for o in origins if o.pruned is not None]
        q_minus = np.mean(negatives, axis=0) if negatives else None
        return rocchio(q_o, self.vectors[node], q_minus, alpha=c.rocchio_alpha, beta=c.rocchio_beta,
                       gamma=c.rocchio_gamma)

    async def decompose(self, question: str) -> list[str]:
        if self.llm is None:
            return [question]
        prompt = DECOMPOSE.format(m=self.config.breadth, question=question)
        try:
            reply = await self.llm.json([{"role": "user", "content": prompt}], SubQuestions, step="topg.decompose",
                                        kind="query")
            # a placeholder ("...", the prompt's own example) asks nothing, as in Local mode's NextQ
            questions = [q.strip() for q in reply.questions if any(ch.isalnum() for ch in q)][: self.config.breadth]
        except StructuredOutputError:
            questions = []
        self.trace.append(TraceStep("planner", "decompose", {"m": self.config.breadth}, {"questions": questions}))
        return questions or [question]

    async def collect_anchors(self, question: str) -> list[int]:
        """Alg. 2; ``anchors`` holds what was collected if a call budget ends it early."""
        c = self.config
        pool: list[int] = []
        for sub in await self.decompose(question):
            vec = self.embed(sub)
            suggested = self.enter(sub) if self.enter is not None else self.suggester.naive(vec)
            kept = await self.select(sub, suggested)
            pruned = self._pruned_mean(suggested, kept)
            for node in kept:
                self.origins.setdefault(node, []).append(Origin(vec, pruned))
                if node not in pool:
                    pool.append(node)
                    self.anchors.append(node)
        iteration = 0
        while pool and len(self.anchors) < c.min_facts and iteration < c.global_max_iter:
            pool = await self._iterate(question, pool, iteration)
            iteration += 1
        return self.anchors

    async def _iterate(self, question: str, pool: list[int], iteration: int) -> list[int]:
        """Alg. 2 lines 11-19: per-node queries, SuggestGlobal and Select per partition of the pool."""
        c = self.config
        queries = {node: self.query_for(node) for node in pool}
        new_pool: list[int] = []
        for part in (list(p) for p in np.array_split(np.array(pool), min(c.breadth, len(pool))) if len(p)):
            suggested, reached_by = self.suggest_global(part, queries, set(self.anchors))
            kept = await self.select(question, suggested)
            pruned = self._pruned_mean(suggested, kept)
            for node in kept:
                self.origins.setdefault(node, []).append(Origin(queries[reached_by[node]], pruned))
                if node not in new_pool and node not in self.anchors:
                    new_pool.append(node)
                    self.anchors.append(node)
        self.trace.append(TraceStep("suggester", "suggest.global", {"iteration": iteration, "pool": len(pool)},
                                    {"new_anchors": len(new_pool), "anchors": len(self.anchors)}))
        return new_pool

    def suggest_global(self, part: list[int], queries: dict[int, np.ndarray],
                       taken: set[int]) -> tuple[list[int], dict[int, int]]:
        """Eq. 10: one walk per partition node u_i with its own query q_i, seeded on {u_i} alone,
        on the GExtract subgraph of the partition; the distributions are summed. Also returns, for
        each suggestion, the partition node whose walk gave it the most probability (k*)."""
        c = self.config
        graph = self.suggester.graph
        sub = self.suggester.extract_subgraph(part)
        position = {int(n): i for i, n in enumerate(sub)}
        total = np.zeros(len(sub))
        best = np.full(len(sub), -1.0)
        reached_by = np.full(len(sub), part[0])
        for node in part:
            if node not in position:
                continue
            cosine = graph.vectors.vectors[sub] @ queries[node]
            m = query_aware_transition(graph.incidence[sub], cosine, lam=c.lam, theta=c.theta, tau=c.tau)
            seed = np.zeros(len(sub))
            seed[position[node]] = 1.0
            pi = personalized_pagerank(None, seed, damping=c.damping, transition=m)
            total += pi
            better = pi > best
            best[better] = pi[better]
            reached_by[better] = node
        order = [i for i in np.argsort(-total, kind="stable") if int(sub[i]) not in taken and total[i] > 0]
        chosen = [int(sub[i]) for i in order[: c.k]]
        return chosen, {int(sub[i]): int(reached_by[i]) for i in order[: c.k]}


@dataclass
class CommunityReporter:
    """Communities of the proposition graph around the anchors, and the report built from them."""

    suggester: Suggester
    config: ToPGConfig
    store: GraphStore
    trace: list[TraceStep] = field(default_factory=list)
    scored: list[tuple[int, str]] = field(default_factory=list)  # intermediate answers so far
    used: list[int] = field(default_factory=list)  # propositions of the communities read so far

    @cached_property
    def communities(self) -> list[frozenset[int]]:
        """Hierarchical Leiden over G (propositions, entities and passages; cached per version of the
        index). Each community is the set of its nodes: proposition rows below n, connector j as
        n + j. The 10-150 size filter, Alg. 3's size(c) and its budget B all count these nodes (App.
        B.5: "size (number of nodes)", "a budget limit of B total nodes"); coverage counts anchors."""
        c = self.config
        found = proposition_communities(self.suggester.graph, self.store, c.max_community_size)
        return [frozenset(members) for members in found
                if c.min_community_size <= len(members) <= c.max_community_size]

    def propositions_of(self, community: frozenset[int]) -> list[int]:
        return sorted(m for m in community if m < self.suggester.graph.n)

    def choose(self, anchors: list[int]) -> list[int]:
        """Alg. 3: the communities that cover the anchors best, by uncovered anchors per node, until
        every anchor is covered or B nodes are spent."""
        chosen = greedy_budgeted_communities(set(anchors), self.communities, self.config.budget)
        self.trace.append(TraceStep("reporter", "communities", {"candidates": len(self.communities),
                                                                "budget_nodes": self.config.budget},
                                    {"chosen": len(chosen),
                                     "nodes": sum(len(self.communities[i]) for i in chosen)}))
        return chosen

    def material(self, community: frozenset[int], counter: TokenCounter) -> list[str]:
        """The community's own nodes as pieces of text: its entities, its propositions and its
        (truncated) passages."""
        g = self.suggester.graph
        props = self.propositions_of(community)
        connector_ids = sorted(g.connectors[m - g.n] for m in community if m >= g.n)
        nodes = self.store.get_nodes(connector_ids)
        entities = [n.text for n in nodes if n.type == "entity"]
        passages = [counter.truncate(n.text, self.config.passage_token_limit) for n in nodes if n.type == "chunk"]
        return ([f"Entities: {', '.join(entities)}"] if entities else []) + \
            [f"Fact: {g.texts[p]}" for p in props] + [f"Passage: {t}" for t in passages]

    def chunks(self, pieces: list[str], counter: TokenCounter) -> list[str]:
        limit = self.config.max_tokens_community_chunks
        out: list[str] = []
        current: list[str] = []
        used = 0
        for piece in pieces:
            cost = counter.count(piece) + 1
            if current and used + cost > limit:
                out.append("\n".join(current))
                current, used = [], 0
            current.append(piece)
            used += cost
        if current:
            out.append("\n".join(current))
        return out

    async def intermediate(self, question: str, chosen: list[int], llm: LLM) -> None:
        """An intermediate answer with a relevance score per chunk of each chosen community's material
        (kept in ``scored`` as they come, so that a call budget keeps what was written)."""
        for index in chosen:
            self.used += self.propositions_of(self.communities[index])
            for chunk in self.chunks(self.material(self.communities[index], llm.counter), llm.counter):
                prompt = INTERMEDIATE.format(question=question, material=chunk)
                try:
                    part = await llm.json([{"role": "user", "content": prompt}], Intermediate,
                                          step="topg.intermediate", kind="answer")
                except StructuredOutputError:
                    continue
                if part.score > 0 and part.answer.strip():
                    self.scored.append((part.score, part.answer.strip()))

    async def write(self, question: str, llm: LLM) -> str | None:
        """The report from the intermediate answers, best first while the context has room, ordered
        against lost-in-the-middle; None when there is none."""
        ranked = [text for _, text in sorted(self.scored, key=lambda t: -t[0])]
        self.trace.append(TraceStep("reporter", "intermediate_answers", {}, {"kept": len(ranked)}))
        if not ranked:
            return None
        kept, budget = [], self.config.max_tokens_report
        for text in ranked:
            cost = llm.counter.count(text) + 4
            if cost > budget:
                break
            kept.append(text)
            budget -= cost
        analyses = "\n\n".join(f"Analysis {i}:\n{t}" for i, t in enumerate(lost_in_the_middle(kept), 1))
        text = await llm.text([{"role": "user", "content": REPORT.format(question=question, analyses=analyses)}],
                              step="topg.report", kind="report")
        return text.strip()
