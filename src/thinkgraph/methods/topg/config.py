"""ToPG defaults (ToPG App. A / Table 5), each a named, documented value."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ToPGConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lam: float = 0.5  # lambda: weight of the structural transition T_s in M
    damping: float = 0.85  # PPR damping on M
    theta: float = 0.4  # cosine threshold of T_n
    tau: float = 0.1  # temperature of T_n
    subgraph_size: int = 500  # l: GExtract target size
    restart: float = 0.15  # restart probability of GExtract's random walk
    k: int = 20  # propositions suggested per call (k = 20 for Naive and Local, ToPG §3.2)
    mode: Literal["naive", "local", "global"] = "local"
    max_iter: int = 3  # Local mode iterations (the paper evaluates 1 and 3)
    max_next_questions: int = 3  # sub-questions NextQ may ask per iteration (our bound)
    # Global mode (ToPG §2.3.3, App. B.3-B.5, Table 5)
    breadth: int = 10  # m: sub-queries and partitions
    feedback: Literal["rocchio", "simple"] = "rocchio"  # simple: alpha=1, beta=gamma=0
    rocchio_alpha: float = 1.0
    rocchio_beta: float = 0.7
    rocchio_gamma: float = 0.15
    min_facts: int = 600  # anchors to collect; the paper sweeps 200-1000 and sees a plateau near 600
    global_max_iter: int = 5  # our bound on Alg. 2's loop (the paper leaves max-iter open)
    budget: int = 8000  # B: node budget of the greedy community selection
    min_community_size: int = 10
    max_community_size: int = 150
    max_tokens_report: int = 8000  # context of the final report prompt
    passage_token_limit: int = 500  # tokens taken from each community passage
    max_tokens_community_chunks: int = 8000  # community content per intermediate-answer prompt
    # Our bound on LLM calls per question, not the paper's (it reports 2.1M prompt tokens per global
    # query). Local mode needs at most ~20; global mode's anchors take about 1 + m + max_iter * m
    # Select calls and each chunk of community material one more. When spent, global mode writes its
    # report from the intermediate answers gathered (one call is kept for it); local mode stops.
    max_calls: int | None = Field(300, ge=1)
