"""ToPG defaults (ToPG App. A / Table 5), each a named, documented value."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class ToPGConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lam: float = 0.5  # lambda: weight of the structural transition T_s in M
    damping: float = 0.85  # PPR damping on M
    theta: float = 0.4  # cosine threshold of T_n
    tau: float = 0.1  # temperature of T_n
    subgraph_size: int = 500  # l: GExtract target size
    restart: float = 0.15  # restart probability of GExtract's random walk
    k: int = 20  # propositions suggested per call (k = 20 for Naive and Local, ToPG §3.2)
    mode: Literal["naive", "local"] = "local"
    max_iter: int = 3  # Local mode iterations (the paper evaluates 1 and 3)
    max_next_questions: int = 3  # sub-questions NextQ may ask per iteration (our bound)
