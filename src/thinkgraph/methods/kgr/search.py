"""Reasoning strategies over steppers (agent or explore): CoT (one chain of up to n steps), ToT
(k candidates per expanded state, t kept, to depth D) and GoT (ToT plus a merge of each pair of a
level's candidates into a new state with both parents). State evaluators: `select` (the model picks
the best states in one call per group) and `score` (the model gives each state a probability).

LLM calls, with no chain finishing early (App. E): CoT n; ToT k(t^D - 1)/(t - 1) generations, plus
(t^D - 1)/(t - 1) selection calls or one score call per candidate; GoT adds
sum_{i=1..D} floor(k t^(i-1) / 2) merges (the paper writes the level sizes as k t^i)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Protocol

from thinkgraph.llm.service import LLM
from thinkgraph.methods.kgr.config import KGRConfig
from thinkgraph.methods.kgr.prompts import SCORE_VOTE, SELECT_VOTE, VARIANT
from thinkgraph.methods.kgr.state import ChainState
from thinkgraph.methods.kgr.trace import Recorder

_BEST = re.compile(r"best choices?\s*(?:is|are)?\s*:?\s*([\d,\sand]+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d*\.?\d+")


class Stepper(Protocol):
    async def step(self, state: ChainState, variant: str) -> ChainState: ...
    async def merge(self, a: ChainState, b: ChainState, variant: str) -> ChainState: ...


@dataclass
class SearchResult:
    best: ChainState | None
    states: int
    merges: int = 0
    finished: list[ChainState] = field(default_factory=list)


async def run_chain(stepper: Stepper, root: ChainState, steps: int) -> SearchResult:
    state = root
    for _ in range(steps):
        state = await stepper.step(state, "")
        if state.answer is not None:
            return SearchResult(state, state.depth, finished=[state])
    return SearchResult(None, state.depth)


class Evaluator:
    def __init__(self, llm: LLM, question: str, kind: str, recorder: Recorder) -> None:
        self.llm, self.question, self.kind, self.recorder = llm, question, kind, recorder

    async def rank(self, candidates: list[ChainState]) -> list[ChainState]:
        """Best first; every candidate gets a score (select: its normalised rank)."""
        ranked = await (self._select(candidates) if self.kind == "select" else self._score(candidates))
        self.recorder.evaluation(self.kind, candidates, ranked)
        return ranked

    async def _select(self, candidates: list[ChainState]) -> list[ChainState]:
        choices = "\n".join(f"Choice {i}:\n{c.render()}" for i, c in enumerate(candidates, 1))
        prompt = SELECT_VOTE.format(question=self.question, choices=choices, count=len(candidates))
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
            prompt = SCORE_VOTE.format(question=self.question, chain=c.render())
            reply = await self.llm.text([{"role": "user", "content": prompt}], step="kgr.score", kind="verdict")
            found = _NUMBER.search(reply)
            if found is None:
                self.recorder.parse_failures += 1
            c.score = min(max(float(found.group()), 0.0), 1.0) if found else 0.0

        await asyncio.gather(*(one(c) for c in candidates))
        return sorted(candidates, key=lambda c: -(c.score or 0.0))  # stable: ties keep generation order


async def run_tree(stepper: Stepper, evaluator: Evaluator, root: ChainState, config: KGRConfig, *,
                   merge: bool) -> SearchResult:
    frontier, finished = [root], []
    states, merges = 0, 0
    for _ in range(config.tree_depth):
        groups = await asyncio.gather(*(_expand(stepper, parent, config.k) for parent in frontier))
        groups = [list(g) for g in groups]
        states += sum(len(g) for g in groups)
        if merge:
            made = await _merge_level(stepper, groups)
            merges += made
            states += made
        if config.retain == "per_parent":
            ranked = await asyncio.gather(*(evaluator.rank(g) for g in groups))
            kept = [s for r in ranked for s in r[: config.t]]
        else:
            kept = (await evaluator.rank([s for g in groups for s in g]))[: config.t]
        finished += [s for s in kept if s.answer is not None]
        frontier = [s for s in kept if s.answer is None]
        if not frontier:
            break
    best = min(finished, key=lambda s: (-(s.score or 0.0), s.depth), default=None)
    return SearchResult(best, states, merges, finished)


async def _expand(stepper: Stepper, parent: ChainState, k: int) -> list[ChainState]:
    variants = [VARIANT.format(index=j + 1, count=k) if k > 1 else "" for j in range(k)]
    return list(await asyncio.gather(*(stepper.step(parent, v) for v in variants)))


async def _merge_level(stepper: Stepper, groups: list[list[ChainState]]) -> int:
    """Merge consecutive pairs of the level's unfinished candidates; a merged state joins the group
    of its first parent (so it competes with that parent's siblings)."""
    owner = {id(s): g for g in groups for s in g}
    open_states = [s for g in groups for s in g if s.answer is None]
    pairs = list(zip(open_states[0::2], open_states[1::2], strict=False))
    merged = await asyncio.gather(*(stepper.merge(a, b, "") for a, b in pairs))
    for (a, _), m in zip(pairs, merged, strict=True):
        owner[id(a)].append(m)
    return len(pairs)
