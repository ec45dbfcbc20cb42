"""Reasoning strategies over steppers (agent or explore): CoT (one chain of up to n steps), ToT
(k candidates per expanded state, t kept, to depth D) and GoT (ToT plus a merge of each pair of a
level's candidates into a new state with both parents). State evaluators: `select` (the model picks
the best states in one call per group) and `score` (the model gives each state a probability).

LLM calls, with no chain finishing early: CoT n. ToT keeping the t best of each level (Eq. 2, the
default) k + (D - 1) k t generations (t <= k), plus D selection calls or one score call per candidate;
keeping t per parent (App. E's table) k(t^D - 1)/(t - 1) generations plus (t^D - 1)/(t - 1)
selection calls. GoT adds a merge per pair of a level's unfinished candidates (per parent:
sum_{i=1..D} floor(k t^(i-1) / 2); the paper writes the level sizes as k t^i). The per-question call
budget (``max_calls``) bounds all of them. These are the paper's forms (``finish_at_limit = false``);
by default (ours) the last step of a chain that has not finished is its finishing step: CoT's n-th
call, and at a tree's last level one finishing call per kept state instead of k generations (and no
merges there)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from thinkgraph.errors import CallBudgetReached
from thinkgraph.llm.service import LLM
from thinkgraph.methods.kgr.config import KGRConfig
from thinkgraph.methods.kgr.examples import examples
from thinkgraph.methods.kgr.prompts import SCORE_VOTE, SELECT_VOTE, VARIANT
from thinkgraph.methods.kgr.state import ChainState
from thinkgraph.methods.kgr.trace import Recorder

_BEST = re.compile(r"best choices?\s*(?:is|are)?\s*:?\s*([\d,\sand]+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d*\.?\d+")
T = TypeVar("T")


class Stepper(Protocol):
    async def step(self, state: ChainState, variant: str, *, repair: bool = True) -> ChainState: ...
    async def merge(self, a: ChainState, b: ChainState, variant: str) -> ChainState: ...
    async def finish(self, state: ChainState, variant: str) -> ChainState: ...


@dataclass
class SearchResult:
    best: ChainState | None
    states: int
    merges: int = 0
    finished: list[ChainState] = field(default_factory=list)
    budget_reached: bool = False  # the per-question call budget ended the search
    last: ChainState | None = None  # CoT: the chain as it ended, finished or not


async def gather_all(aws: Iterable[Awaitable[T]]) -> list[T]:
    """Like asyncio.gather, but every task ends before the first exception is raised (none is left
    running or unobserved when a call budget runs out mid-level)."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results  # type: ignore[return-value]


async def gather_within_budget(aws: Iterable[Awaitable[T]]) -> tuple[list[T], bool]:
    """The results that finished, and whether the call budget stopped any of the others."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException) and not isinstance(r, CallBudgetReached):
            raise r
    done = [r for r in results if not isinstance(r, BaseException)]
    return done, len(done) < len(results)


async def run_chain(stepper: Stepper, root: ChainState, steps: int, *, finish_at_limit: bool = False,
                    repair: bool = False) -> SearchResult:
    """Steps until Finish or n steps. A step's repair call (``repair``) counts as a step, so a chain
    makes at most n calls; with ``finish_at_limit`` the n-th call is the finishing step (not for a
    chain of one step: it has nothing to finish from), so a repair is allowed while it leaves room for
    both."""
    state = root
    while state.spent < steps:
        left = steps - state.spent
        try:
            if finish_at_limit and left == 1 and state.steps:
                state = await stepper.finish(state, "")
            else:
                state = await stepper.step(state, "", repair=repair and left >= (3 if finish_at_limit else 2))
        except CallBudgetReached:
            return SearchResult(None, state.depth, budget_reached=True, last=state)
        if state.answer is not None:
            return SearchResult(state, state.depth, finished=[state], last=state)
    return SearchResult(None, state.depth, last=state)


class Evaluator:
    def __init__(self, llm: LLM, question: str, kind: str, recorder: Recorder, *, few_shot: bool = True) -> None:
        self.llm, self.question, self.kind, self.recorder = llm, question, kind, recorder
        self.few_shot = few_shot

    async def rank(self, candidates: list[ChainState]) -> list[ChainState]:
        """Best first; every candidate gets a score (select: its normalised rank)."""
        ranked = await (self._select(candidates) if self.kind == "select" else self._score(candidates))
        self.recorder.evaluation(self.kind, candidates, ranked)
        return ranked

    async def _select(self, candidates: list[ChainState]) -> list[ChainState]:
        choices = "\n".join(f"Choice {i}:\n{c.render()}" for i, c in enumerate(candidates, 1))
        prompt = SELECT_VOTE.format(question=self.question, choices=choices, count=len(candidates),
                                    examples=examples("select", self.few_shot))
        reply = await self.llm.text([{"role": "user", "content": prompt}], step="kgr.select", kind="verdict")
        match = _BEST.search(reply)
        picked = [int(x) for x in re.findall(r"\d+", match.group(1))] if match else []
        if not match:
            self.recorder.parse_failures += 1
        order = list(dict.fromkeys(i - 1 for i in picked if 1 <= i <= len(candidates)))
        order += [i for i in range(len(candidates)) if i not in order]  # unpicked keep their order
        for rank, i in enumerate(order):
            candidates[i].score = (len(candidates) - rank) / len(candidates)
        return [candidates[i] for i in order]

    async def _score(self, candidates: list[ChainState]) -> list[ChainState]:
        async def one(c: ChainState) -> None:
            prompt = SCORE_VOTE.format(question=self.question, chain=c.render(),
                                       examples=examples("score", self.few_shot))
            reply = await self.llm.text([{"role": "user", "content": prompt}], step="kgr.score", kind="verdict")
            found = _NUMBER.search(reply)
            if found is None:
                self.recorder.parse_failures += 1
            c.score = min(max(float(found.group()), 0.0), 1.0) if found else 0.0

        await gather_all(one(c) for c in candidates)
        return sorted(candidates, key=lambda c: -(c.score or 0.0))  # stable: ties keep generation order


async def run_tree(stepper: Stepper, evaluator: Evaluator, root: ChainState, config: KGRConfig, *,
                   merge: bool) -> SearchResult:
    """BFS to depth D: expand each frontier state into k candidates (GoT: plus merges), evaluate, keep
    t (Eq. 2: of the whole level by default, or per parent), stop when no kept state is unfinished.
    When the call budget runs out, the search ends with the chains finished so far."""
    result = SearchResult(None, 0)
    frontier, finished = [root], []
    for level in range(config.tree_depth):
        # the last level of a tree of two or more levels finishes each kept state (finish_at_limit)
        last = config.finish_at_limit and level == config.tree_depth - 1 and level > 0
        expand = _finish_one if last else _expand
        # one state's candidates at a time (they are asked together): their steps and repairs follow each
        # other, so a one-slot server's prompt cache keeps the conversation they share (ours, issue #48)
        expanded = [await expand(stepper, parent, config.k, config.repair) for parent in frontier]
        groups = [children for children, _ in expanded]
        spent = any(partial for _, partial in expanded)
        result.states += sum(len(g) for g in groups)
        if merge and not spent and not last:
            made, spent = await _merge_level(stepper, groups)
            result.merges += made
            result.states += made
        try:
            kept = [] if spent else await _retain(evaluator, groups, config)
        except CallBudgetReached:
            kept, spent = [], True
        if spent:  # this level's finished candidates still count, unevaluated
            finished += [s for g in groups for s in g if s.answer is not None]
            result.budget_reached = True
            break
        finished += [s for s in kept if s.answer is not None]
        frontier = [s for s in kept if s.answer is None]
        if not frontier:
            break
    result.finished = finished
    result.best = min(finished, key=lambda s: (-(s.score or 0.0), s.depth), default=None)
    return result


async def _retain(evaluator: Evaluator, groups: list[list[ChainState]], config: KGRConfig) -> list[ChainState]:
    if config.retain == "per_parent":
        ranked = await gather_all(evaluator.rank(g) for g in groups)
        return [s for r in ranked for s in r[: config.t]]
    return (await evaluator.rank([s for g in groups for s in g]))[: config.t]


async def _expand(stepper: Stepper, parent: ChainState, k: int, repair: bool) -> tuple[list[ChainState], bool]:
    variants = [VARIANT.format(index=j + 1, count=k) if k > 1 else "" for j in range(k)]
    return await gather_within_budget(stepper.step(parent, v, repair=repair) for v in variants)


async def _finish_one(stepper: Stepper, parent: ChainState, k: int, repair: bool) -> tuple[list[ChainState], bool]:
    """The finishing step of one kept state: one call, whatever the branching factor."""
    return await gather_within_budget([stepper.finish(parent, "")])


async def _merge_level(stepper: Stepper, groups: list[list[ChainState]]) -> tuple[int, bool]:
    """Merge consecutive pairs of the level's unfinished candidates; a merged state joins the group
    of its first parent (so it competes with that parent's siblings). Returns (merges made, whether
    the call budget stopped some)."""
    owner = {id(s): g for g in groups for s in g}
    open_states = [s for g in groups for s in g if s.answer is None]
    pairs = list(zip(open_states[0::2], open_states[1::2], strict=False))

    async def merged(a: ChainState, b: ChainState) -> tuple[ChainState, ChainState]:
        return a, await stepper.merge(a, b, "")

    done, spent = await gather_within_budget(merged(a, b) for a, b in pairs)
    for a, m in done:  # in pair order, whatever order the calls ended in
        owner[id(a)].append(m)
    return len(done), spent
