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
    # Entity seeds S_V (§III-C leaves the extractor and matcher open: "a standard NER/phrase extractor",
    # "e.g. edit similarity combined with embedding cosine"). "shared" (ours, the default): the index's
    # entities the question names (retrieval/linking.py, as `ppr` links them), the hybrid matcher below
    # only when none is named. "paper": the hybrid edit/cosine matcher alone.
    retrieval: Literal["shared", "paper"] = "shared"
    # Query mentions: "phrases" (§III-C: "a standard NER/phrase extractor", no LLM call; the relation
    # phrase is the question without its entity mentions) or "llm" (one extraction call per attempt).
    seed_source: Literal["phrases", "llm"] = "phrases"
    # Seeds: hybrid lexical (edit similarity) and embedding matcher, high-confidence matches only.
    seed_lexical_weight: float = Field(0.5, ge=0.0, le=1.0)
    seed_threshold: float = Field(0.6, ge=0.0, le=1.0)
    seed_candidates: int = Field(20, ge=1)
    max_seeds: int = Field(8, ge=1)
    # A date or number the question names ("founded in 2005", "at the 2011 census") is a qualifier the
    # answer's passages must state, not an entity to start from (§III-A: graphs lose "numbers, temporal
    # qualifiers"; §V: poor seeds misdirect bridge discovery): False (ours, the default) leaves such values
    # out of S_V while a named entity remains; they still rank passages through the query. On HotpotQA's
    # co-occurrence graph a year seed is a hub: stage 1 read its hundreds of facts and stage 2's bridges
    # were other years. True: every linked entity is a seed (the earlier form).
    value_seeds: bool = False
    relation_seeds: bool = True  # the paper's ablation "node-only seeds" sets this False
    relation_threshold: float = Field(0.6, ge=0.0, le=1.0)
    # Stage 2 (eq. 8): bridges within K hops (K >= 2) of at least two seeds; capped paths and bridges.
    k_hops: int = Field(2, ge=2)  # K >= 2 (eq. 8: a bridge is reached from two seeds)
    max_paths_per_pair: int = Field(2, ge=1)
    max_bridges: int = Field(20, ge=0)
    # Stage 1 suffices only when its facts connect the entity seeds (§III-C.2: bridge discovery is for
    # when stage 1 "fails to connect multiple query entities"); with two or more seeds apart after stage 1
    # the retriever escalates without a judgement. False: the judgement alone decides (the earlier form,
    # where a small model's draft of a bridge entity passed and ended the stages).
    local_connects_seeds: bool = True
    # Stages 1-2 on (False: the ablation "stages 1-2 off", straight to stage 3).
    local_bridge: bool = True
    # Stage 3. "paper" (the default, eqs. 9-12): PPR on the entity graph G' with p0(u) proportional to
    # 1/deg(u) over the seeds S_V and teleport alpha, the top-L nodes mapped back to the chunks that
    # contain them (pi), in the order stage3_order gives (eq. 12 is a set).
    # "shared_walk" (ours): the project's walk over entities and passages (`ppr`'s, retrieval/graph.py,
    # the [retrieval] settings) started from the same seeds S_V, its top-L passages the stage's chunks.
    stage3: Literal["paper", "shared_walk"] = "paper"
    # The order of stage 3's map-back set (eq. 12 is a set; the order is ours). "fused" (the default):
    # reciprocal-rank fusion (retrieval/fusion.py) of each chunk's PPR mass and its cosine to the query, the
    # order stages 1-2 use; "mass": the PPR mass alone (the earlier default). Without an LLM, on the first 20
    # dev questions, the top 5 handed on holds 84.2 % of MuSiQue's gold passages against 75.0 by mass, and
    # 77.5 % of HotpotQA's against 60.0 (the top 5 equals `ppr`'s on 2 and 3 of the 20).
    stage3_order: Literal["fused", "mass"] = "fused"
    # Stage 3 is the last resort, so it hands on at least evidence_chunks passages (ours): when the map-back
    # set has fewer (seeds the graph barely links: a PPR from an entity without facts stays on it), the
    # passages nearest the query fill it, after the map-back's own. False: the map-back set alone.
    stage3_fill: bool = True
    # The paper gives neither alpha nor L: 0.15 is the usual PageRank teleport, 30 ours.
    alpha: float = Field(0.15, gt=0.0, lt=1.0)
    top_l: int = Field(30, ge=1)
    # The order of the evidence a stage hands on (the paper's stages 1-2 hand on triples; their chunks,
    # the triples' provenance, are ours). "stage" (the default): the chunks the current stage found, by
    # its own scores (stages 1-2: stage_chunk_order; stage 3: stage3_order), then those the
    # earlier stages found (carried in the state, §III-C), the latest stage first. "interleaved" (ours,
    # the previous retrieval="paper" order): stage by stage, each stage's best first. "shared_walk"
    # (ours, the previous default): every stage's chunks pooled and sorted by the shared walk's score.
    evidence_order: Literal["stage", "interleaved", "shared_walk"] = "stage"
    # How stages 1-2 order their own chunks (the paper leaves it open; ours). "text" (the default): by the
    # shared hybrid text score (BM25 and dense cosine min-max fused among the stage's chunks, as ``ppr``'s
    # passage prior fuses them), BM25 reading the query with the names of the entities an abstaining
    # draft reached (seeds_from_draft). "cosine": dense cosine to the query alone (the earlier default),
    # under which hubs a bridge path crosses (a year, a nationality) bring passages that outrank the one
    # the path was for. Without an LLM (benchmarks/a2rag_stage_order.py), the top 5 of stage 1 (2)'s
    # chunks on HotpotQA's 100 dev questions: gold recall 77.3 (82.7) against cosine's 75.3 (80.1);
    # MuSiQue's 50: 49.6 (61.5) either way. With
    # Qwen2.5-1.5B on the first 20 dev questions (commit 3f50bb7 against beaa1ff): HotpotQA 48.3 -> 55.8 (2
    # better: the Leland film's director, the publisher's city; 1 half worse), MuSiQue 34.2 -> 35.4 (1 better).
    stage_chunk_order: Literal["text", "cosine"] = "text"
    # Evidence handed to the answerer per stage (chunks), and the triples shown alongside.
    evidence_chunks: int = Field(5, ge=1)
    # Facts shown beside the passages (ours; the paper leaves it open): those stated in the passages shown
    # first, then by cosine to the query. 10: a 1.5B model read past the relevant few among 40.
    max_triples: int = Field(10, ge=0)
    # Beside the passages a draft (and Triple-Check) reads, the seeds each passage names: "[2] Roddy
    # Maude-Roxby, Tom Rowe" (ours, on). The passage naming two of the question's entities is the bridge a
    # small model overlooked among five (Qwen2.5-1.5B named a film of the actor's own passage, not the one
    # of the passage naming him and the writer); `ppr`'s reader has its entity paths there. Measured with
    # Qwen2.5-1.5B on the first 20 dev questions (commit 1ad815c against 3f50bb7, with the reader's pick of
    # an "A or B" option, which won back the larger plant the text order had cut to a sentence): HotpotQA
    # 55.8 -> 63.3 (that film, and the plant), MuSiQue 35.4 either way (2 answers better, 2 worse). The
    # notes' title says "the question's entities"; it lists the seeds a draft reached too (measured so).
    seed_notes: bool = True
    # The answer step. "shared" (the default): the one reader (methods/reader.py) over the stage's
    # passages with its facts as notes. "paper": the ANSWER template (facts, then passages).
    reader: Literal["shared", "paper"] = "shared"
    # Sufficiency after each stage (§III-C.4). "answer" (ours, the earlier default): the answerer drafts an
    # answer from the evidence so far and a draft of "Unknown" escalates, so the check costs no call
    # of its own and the draft of the sufficient stage is the candidate answer (the paper's 2.0 calls
    # per question, Tables II-III, are out of reach with a separate check per stage). "llm": a
    # separate sufficiency verdict after each stage, then the answer. "all": every stage, no check.
    # "verified" (ours): a stage suffices when its draft is an answer that passes Triple-Check, so a
    # rejected draft escalates to the next stage instead of ending the attempt (a small model's draft
    # is seldom "Unknown"; Triple-Check then tells that the stage's evidence did not hold the answer).
    # The default is "verified", the paper's stage-wise sufficiency judged on what each stage found: with
    # "answer" a small model's draft was seldom "Unknown", so 18 of 20 questions stopped at stage 1.
    sufficiency: Literal["answer", "llm", "all", "verified"] = "verified"
    # A pre-check before a stage's draft (ours, off by default): the stage is drafted only when the
    # passages it shows hold the shared walk's best N; otherwise it escalates without a draft. It judges
    # the walk, not the stage (with N = evidence_chunks and evidence_order="shared_walk" every draft
    # saw `ppr`'s top N), so the paper form leaves it at 0.
    sufficiency_precheck: int = Field(0, ge=0)
    # Triple-Check (eqs. 2-5): "joint" (ours, the default) asks the three validators in one structured
    # verdict, the failure type still the first failed of rel, grd, ans; "separate": three calls; "off":
    # the ablation without Triple-Check (the first candidate answer stands unverified, no rewrite).
    triple_check: Literal["joint", "separate", "off"] = "joint"
    # Before the verdict (ours): an answer that is not stated in what its draft was shown (each of its words
    # starts a word of the passages, the facts or the query; yes / no pass) fails as "grd" without a call,
    # as an unstated number already did. Qwen2.5-1.5B's verdict passed "Fred M. Andrews" for the director of
    # the film shot in Leland citing Leland's passage (P(grd) 0.96). Measured (docs/fidelity.md): it fired
    # on 3 of the first 20 + 20 dev questions (two wrong answers, and "Norway", right from the model's own
    # knowledge and given again by stage 3) and changed no F1. False: the verdict alone.
    stated_check: bool = True
    # Every verdict writes its reason first and "yes"/"no" last; where the server returns
    # log-probabilities it passes when P(yes) >= the threshold (ours: 0.5, the point
    # benchmarks/calibrate_verdicts.py chose on the dev questions, where P(yes) written after the reason is
    # almost always below 0.1 or above 0.9, so that a threshold moves one or two verdicts at most).
    check_threshold: float = Field(0.5, ge=0.0, le=1.0)  # Triple-Check's (and "verified" sufficiency's)
    sufficiency_threshold: float = Field(0.5, ge=0.0, le=1.0)  # the separate verdict's (sufficiency="llm")
    # Failure-aware rewrite (eq. 6). False: the ablation without rewrite (a failed check ends the
    # attempts: the same query would retrieve and fail the same way).
    rewrite: bool = True
    # When the model's rewrite is no new question even when asked again (Qwen2.5-1.5B repeated the question
    # on most rewrites), or names no entity the query does not (it would seed the same neighbourhood again),
    # the next query is the question (or that rewrite) naming the entities the rejected draft's reasoning
    # reached that it does not (ours; a2rag/rewrite.py ``with_draft_names``): the draft often stopped at the
    # bridge ("Maximum Overdrive was shot in Leland"). False: the model's rewrite stands, and no new
    # question is abstained on.
    rewrite_from_draft: bool = True
    # Within an attempt (ours): a stage whose draft abstains while its reasoning names entities of the index
    # that the query does not ("Maximum Overdrive was shot in Leland", a2rag/rewrite.py ``reached_names``)
    # hands them on as seeds (up to max_seeds in all): the next stage reads their own facts (stage 1 for
    # them) beside its own, and stage 3's PageRank (stage3="paper") starts from them too. The stages then
    # escalate from what the earlier stage found, where the paper's go on from the question's seeds alone.
    # Measured (docs/fidelity.md): it fired on 5 of the first 20 + 20 dev questions and changed no answer.
    # False: the paper's form.
    seeds_from_draft: bool = True
    hitl: bool = False  # propose triples for human review after a verified answer
    # Our bound on LLM calls per question (I_max bounds the retries; this bounds what a raised I_max
    # or repeated repairs can cost). The defaults need at most 14 before repairs (3 attempts of 3 drafts
    # and a verdict, a rewrite between attempts). When spent: abstain.
    max_calls: int | None = Field(60, ge=1)
