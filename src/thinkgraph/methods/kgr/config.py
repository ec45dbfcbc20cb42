"""Settings of `kgr` (KG-grounded CoT / ToT / GoT, "Grounding LLM Reasoning with Knowledge Graphs"),
with the paper's defaults (§5: n = 10 steps; ToT/GoT branching k = 3 and retained t = 3)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class KGRConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strategy: Literal["cot", "tot", "got"] = "cot"
    interaction: Literal["agent", "explore"] = "agent"
    steps: int = Field(10, ge=1)  # n: reasoning steps of a chain (CoT) and tree depth D_max (ToT/GoT)
    depth: int | None = Field(None, ge=1)  # D_max when it should differ from `steps`
    k: int = Field(3, ge=1)  # branching factor: candidate thoughts per expanded state
    t: int = Field(3, ge=1)  # states retained
    evaluator: Literal["select", "score"] = "select"
    # App. E counts k * (t^D - 1) / (t - 1) generations: t states kept per expanded parent. "global"
    # keeps the t best states of the whole level instead (Eq. 2 with b = t), linear in depth.
    retain: Literal["per_parent", "global"] = "per_parent"
    search_depth: int = Field(2, ge=1)  # d of Alg. 1; §7 sees the largest gain from 1 to 2
    retrieve_k: int = Field(1, ge=1)  # nodes RetrieveNode returns (Graph-CoT returns the best one)
    max_neighbors: int = Field(50, ge=1)  # neighbours listed in one observation or pruning prompt
    max_observation_chars: int = Field(4000, ge=200)

    @property
    def tree_depth(self) -> int:
        return self.depth or self.steps
