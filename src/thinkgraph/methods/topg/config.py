"""ToPG defaults, each a named, documented value: the paper's (Table 5, §3.2, App. A-B) unless marked
"ours"."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ToPGConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lam: float = 0.5  # lambda: weight of the structural transition T_s in M
    damping: float = 0.85  # PPR damping on M
    theta: float = 0.4  # cosine threshold of T_n
    tau: float = 0.1  # temperature of T_n
    subgraph_size: int = 500  # l: GExtract's size, in propositions
    restart: float = 0.15  # restart probability of GExtract's random walk (ours: the paper gives none)
    k: int = 20  # propositions suggested per call (k = 20 for Naive and Local, ToPG §3.2)
    mode: Literal["naive", "local", "global"] = "local"
    # Entry points into the proposition graph, i.e. what stands where the paper has SuggestNaive (the
    # seeding of Naive, Local (Alg. 1 l. 2) and Global (Alg. 2 l. 6)), a mechanism the paper leaves
    # open. "shared" (ours): the project's passage walk (question entity links, fact seeds, PPR over
    # entities and passages with its second hop, as `ppr`) ranks the passages, and the best
    # propositions of each ranked passage (entry_per_passage) enter, best passage first, up to k.
    # "paper": SuggestNaive, the k propositions most similar to the question (ToPG §2.3.1). Either
    # way Suggest-local, M = lam T_s + (1 - lam) T_n and PPR seeded on the pool (the method) follow.
    retrieval: Literal["shared", "paper"] = "shared"
    # Propositions each ranked passage contributes to a shared entry (ours): those naming a seed
    # entity of the walk first, then by cosine to the question. One lets k propositions reach k
    # passages; the walk on M reaches a passage's other propositions through the passage. With 2, the
    # LLM-free pool's R@10 (k = 10) fell 4.2 points on MuSiQue dev and 1.0 on HotpotQA dev: the walk
    # on M ranked passages 6-10 worse than the shared walk does.
    entry_per_passage: int = Field(1, ge=1)
    max_iter: int = 3  # Local mode iterations (the paper evaluates 1 and 3)
    max_next_questions: int = 3  # sub-questions NextQ may ask per iteration (our bound)
    # Global mode (ToPG §2.3.3, App. B.3-B.5, Table 5)
    breadth: int = 10  # m: sub-queries and partitions
    feedback: Literal["rocchio", "simple"] = "rocchio"  # simple: alpha=1, beta=gamma=0
    rocchio_alpha: float = 1.0
    rocchio_beta: float = 0.7
    rocchio_gamma: float = 0.15
    min_facts: int = 600  # anchors to collect (ours: the paper sweeps 200-1000 and sees a plateau near 600)
    global_max_iter: int = 5  # our bound on Alg. 2's loop (the paper leaves max-iter open)
    # B: budget of the greedy community selection (Alg. 3), in nodes of every kind (propositions,
    # entities and passages of the chosen communities), the unit of the 10-150 size filter below
    budget: int = 8000
    min_community_size: int = 10  # in nodes of every kind (App. B.5)
    max_community_size: int = 150
    max_tokens_report: int = 8000  # context of the final report prompt
    passage_token_limit: int = 500  # tokens taken from each community passage
    max_tokens_community_chunks: int = 8000  # community content per intermediate-answer prompt
    # Our bound on LLM calls per question, not the paper's (it reports 2.1M prompt tokens per global
    # query). Local mode needs at most ~20; global mode's anchors take about 1 + m + max_iter * m
    # Select calls and each chunk of community material one more. When spent, global mode writes its
    # report from the intermediate answers gathered (one call is kept for it); local mode stops.
    max_calls: int | None = Field(300, ge=1)
