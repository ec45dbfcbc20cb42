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
    # The retrieval building blocks. "shared" (ours, the default): the entity seeds S_V are the index's
    # entities named in the question (retrieval/linking.py, as `ppr` links them; the hybrid matcher
    # below only when none is named), each stage's chunks are ranked by the shared personalized
    # PageRank walk over entities and passages (retrieval/graph.py, with its second hop), and stage 3
    # is that walk, its top-L passages the map-back. "paper": S_V from the hybrid edit/cosine matcher,
    # chunks ranked by cosine to the query, stage 3 the degree-normalised PPR of eqs. 9-12 on the
    # entity graph with map-back to the chunks of its top-L nodes. The paper fixes the stage-3 form
    # and leaves seeds and ranking open; both forms are measured in benchmarks/retrieval_compare.py.
    retrieval: Literal["shared", "paper"] = "shared"
    # Query mentions: "phrases" (§III-C: "a standard NER/phrase extractor", no LLM call; the relation
    # phrase is the question without its entity mentions) or "llm" (one extraction call per attempt).
    seed_source: Literal["phrases", "llm"] = "phrases"
    # Seeds: hybrid lexical (edit similarity) and embedding matcher, high-confidence matches only.
    seed_lexical_weight: float = Field(0.5, ge=0.0, le=1.0)
    seed_threshold: float = Field(0.6, ge=0.0, le=1.0)
    seed_candidates: int = Field(20, ge=1)
    max_seeds: int = Field(8, ge=1)
    relation_seeds: bool = True  # the paper's ablation "node-only seeds" sets this False
    relation_threshold: float = Field(0.6, ge=0.0, le=1.0)
    # Stage 2 (eq. 8): bridges within K hops (K >= 2) of at least two seeds; capped paths and bridges.
    k_hops: int = Field(2, ge=2)  # K >= 2 (eq. 8: a bridge is reached from two seeds)
    max_paths_per_pair: int = Field(2, ge=1)
    max_bridges: int = Field(20, ge=0)
    # Stage 3 (eqs. 9-12): PPR with teleport alpha and degree-normalised seeds; top-L nodes mapped back.
    alpha: float = Field(0.15, gt=0.0, lt=1.0)
    top_l: int = Field(30, ge=1)
    # Evidence handed to the answerer per stage (chunks), and the triples shown alongside.
    evidence_chunks: int = Field(5, ge=1)
    max_triples: int = Field(40, ge=0)
    # Sufficiency after each stage (§III-C.4). "answer" (ours, the default): the answerer drafts an
    # answer from the evidence so far and a draft of "Unknown" escalates, so the check costs no call
    # of its own and the draft of the sufficient stage is the candidate answer (the paper's 2.0 calls
    # per question, Tables II-III, are out of reach with a separate check per stage). "llm": a
    # separate sufficiency verdict after each stage, then the answer. "all": every stage, no check.
    sufficiency: Literal["answer", "llm", "all"] = "answer"
    # With the shared walk (retrieval="shared"), a stage is drafted only when the passages it would show
    # are the walk's best N (ours; 0 drafts after every stage): the global ranking says where the answer
    # most likely is, skipping a draft never costs a call (the last stage's draft stands in), and an
    # answer verified early then rests on evidence as good as the whole pool's. 5 = evidence_chunks.
    sufficiency_precheck: int = Field(5, ge=0)
    # Triple-Check (eqs. 2-5): "joint" (ours, the default) asks the three validators in one structured
    # verdict, the failure type still the first failed of rel, grd, ans; "separate": three calls.
    triple_check: Literal["joint", "separate"] = "joint"
    hitl: bool = False  # propose triples for human review after a verified answer
    # Our bound on LLM calls per question (I_max bounds the retries; this bounds what a raised I_max
    # or repeated repairs can cost). The defaults need at most 15 (3 attempts of 3 drafts, a verdict
    # and a rewrite). When spent: abstain.
    max_calls: int | None = Field(60, ge=1)
