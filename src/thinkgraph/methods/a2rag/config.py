"""A2RAG settings. Numbers the paper gives are marked; the others it leaves open and are ours."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class A2RAGConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Gate (eq. 1): abstain when max cosine(query, document summaries) < tau_g. The paper gives no
    # value; 0.2 keeps in-scope MiniLM queries (their best summary is usually > 0.3) and drops
    # unrelated ones.
    tau_g: float = Field(0.2, ge=-1.0, le=1.0)
    gate: bool = True
    out_of_scope: Literal["abstain", "no_retrieval"] = "abstain"
    # Controller (Alg. 1): at most I_max retries after the first attempt ("typically 2-3").
    i_max: int = Field(2, ge=0)
    # Seeds: hybrid lexical (edit similarity) and embedding matcher, high-confidence matches only.
    seed_lexical_weight: float = Field(0.5, ge=0.0, le=1.0)
    seed_threshold: float = Field(0.6, ge=0.0, le=1.0)
    seed_candidates: int = Field(20, ge=1)
    max_seeds: int = Field(8, ge=1)
    relation_seeds: bool = True  # the paper's ablation "node-only seeds" sets this False
    relation_threshold: float = Field(0.6, ge=0.0, le=1.0)
    # Stage 2 (eq. 8): bridges within K hops (K >= 2) of at least two seeds; capped paths and bridges.
    k_hops: int = Field(2, ge=1)
    max_paths_per_pair: int = Field(2, ge=1)
    max_bridges: int = Field(20, ge=0)
    # Stage 3 (eqs. 9-12): PPR with teleport alpha and degree-normalised seeds; top-L nodes mapped back.
    alpha: float = Field(0.15, gt=0.0, lt=1.0)
    top_l: int = Field(30, ge=1)
    # Evidence handed to the answerer per stage (chunks), and the triples shown alongside.
    evidence_chunks: int = Field(5, ge=1)
    max_triples: int = Field(40, ge=0)
    # Sufficiency after each stage: an LLM check when an LLM is set; "all" runs every stage.
    sufficiency: Literal["llm", "all"] = "llm"
    hitl: bool = False  # propose triples for human review after a verified answer
    # Our bound on LLM calls per question (I_max bounds the retries; this bounds what a raised I_max
    # or repeated repairs can cost). The defaults need about 24 calls. When spent: abstain.
    max_calls: int | None = Field(60, ge=1)
