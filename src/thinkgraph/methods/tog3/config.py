"""ToG-3 settings; App. A numbers are marked, switches are the paper's ablations (Table 3)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ToG3Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The Retriever's "hybrid vector-graph retrieval" (§3.3, App. A). "paper" (default): App. A's
    # Retriever: vector search over every node type in one space (chunks, triplets, communities), the
    # top nodes expanded through the graph (triplet -> its chunks, chunk -> its triplets, community ->
    # its members' relations) and the passages reranked by cosine to the (expanded) query.
    # "shared" (ours, a switch): the passages ranked by the project's HippoRAG-style walk over
    # entities and passages (retrieval/graph.py, `ppr`'s levers from [retrieval]) fed the query and
    # its keywords; triplet and community nodes from vector search. It returns `ppr`'s ranking.
    retrieval: Literal["shared", "paper"] = "paper"
    top_k: int = 5  # App. A: the Retriever returns the top-5 nodes (per node group in "shared")
    context_passages: int = 5  # App. A: Responser/Reflector use the top-5 retrieved passages
    # App. A's 5 passages per subgraph. True (the default): when the expansion of the top nodes (reranked)
    # reached fewer than context_passages, the chunks nearest the query fill the rest after them, so the
    # Responser sees 5 passages and the graph's own come first. False (the earlier form): the expansion
    # alone, where top nodes of other types left 1-3 passages.
    fill_passages: bool = True
    # The Reflector's sufficiency verdict is written after its reason ("yes"/"no"); where the server
    # returns log-probabilities, the round is sufficient when P(yes) >= this (ours; 0.5, the point
    # benchmarks/calibrate_verdicts.py chose on the dev questions: written after its reason, the verdict's
    # P(yes) is below 0.1 or above 0.9 almost always, so a threshold moves one or two verdicts at most).
    reflector_threshold: float = Field(0.5, ge=0.0, le=1.0)
    # A round whose answer is an abstention ("Unknown" and its variants) is insufficient without asking
    # the Reflector (ours): its context did not answer, and a "yes" would end the loop with no answer
    # (Qwen2.5-1.5B judged 3 of MuSiQue's first 20 such rounds sufficient). False: the Reflector judges it.
    abstention_is_insufficient: bool = True
    # The final answer step (a* = pi_resp^final(q, H_K)). "shared" (the default): the one reader
    # (methods/reader.py) over the trajectory's passages, with the sub-answers that are not "Unknown" and
    # the round's answer the Reflector judged sufficient (one it judged insufficient is left out, since
    # 2026-12-02: shown as known, the reader copied it; so is the answer to a sub-question that restates
    # the question, and one of the wrong kind: Trajectory.known_answers), the triples of every subgraph
    # (the latest first) and the community summaries beside them. "paper": the FINAL template of App. J,
    # which shows H whole.
    reader: Literal["shared", "paper"] = "shared"
    # What the shared reader is shown beside the passages (ours; reader = "paper" shows H and the
    # subgraph as App. J does). "all" (the default): the sub-answers (Trajectory.known_answers), the
    # subgraph's triples and the community summaries. "answers": the sub-answers alone (the triples
    # restate the passages the reader reads; about 200 prompt tokens less a question).
    # Measured with Qwen2.5-1.5B at K = 1, first 20 dev (docs/answer-quality.md, eighteenth session): MuSiQue
    # 36.6 -> 48.9 F1 (4 better, none worse; every call sent, 39.6 s = 2.79 x `ppr`'s 14.2, against 43.9 s),
    # HotpotQA 59.2 -> 50.0 (1 better, 3 worse, one abstention; only the reader's calls sent): not the default.
    reader_notes: Literal["all", "answers"] = "all"
    # What the shared reader reads (ours; reader = "paper" reads the trajectory's passages as they are;
    # not the Retriever's fill_passages). "walk" (the default): as many passages as the trajectory's, its
    # own first up to all but reader_fill_passages, then those the shared walk (`ppr`'s personalized
    # PageRank over entities and passages, retrieval/seeded_walk.py) ranks when it restarts at the
    # entities of the trajectory's first context_passages passages (the one at rank r weighing 1 / r**2),
    # with the question's passage prior (methods/tog3/fill.py): on a bridge question the Retriever finds
    # the first hop, and the bridge's own passage is two steps away through the entity both name.
    # "none": the trajectory's passages alone, the former reader. Measured LLM-free on the Retriever's
    # passages for the question (first 20 dev): the gold passages among the five 70.0 % -> 82.5 on
    # HotpotQA, 74.2 -> 81.7 on MuSiQue (`ppr`'s 95.0 and 85.0). Since 2026-12-02 the walk's passages are
    # read second, after the trajectory's first (the next hop beside the entry; retrieval/fusion.py
    # `filled`): with Qwen2.5-1.5B at K = 1, the same calls but the reader's, HotpotQA 50.8 -> 59.2 F1
    # (2 better, 1 worse), MuSiQue 28.9 -> 40.2 (4 better, 2 worse) against reading them last.
    reader_fill: Literal["walk", "none"] = "walk"
    # The passages of the reader's that the walk takes at least (ours: 2, the hops of a bridge question).
    reader_fill_passages: int = Field(2, ge=0)
    max_keywords: int = 10  # keyword expansion ('^'-separated); the paper leaves the count open
    horizon: int = Field(3, ge=1)  # K (Alg. 2): at most K evolutions of query and subgraph
    max_triplets_per_chunk: int = Field(2, ge=1)  # App. A, for triplets extracted on the fly
    max_triples_shown: int = 30
    # Eq. 4 evolves a per-query subgraph: triplets the Constructor extracts on the fly belong to the
    # question. True (opt-in, ours) also writes them to the index with provenance, where later
    # questions and other methods read them; `thinkgraph eval` never allows it (eval/runner.py), so that
    # no question's write-back reaches another question or method.
    write_triplets: bool = False
    # Our bound, not the paper's: LLM calls per question, the final synthesis included. K = 3 with
    # extraction of every newly reached chunk needs about 35; the rest is room for repaired replies.
    # When spent, the loop stops and the final answer is synthesised from the trajectory so far.
    max_calls: int | None = Field(80, ge=1)
    # A next question that restates the original one (the same content words, asking for the same kind of
    # thing, or, since the nineteenth session, the question's own two options of "..., A or B?", asking the
    # same or a part of it: "Who is American, Mark King or Nick Hexum?"; Fig. 14 allows "the same as the
    # original question"; its answer is not shown to the reader as known) is asked again once, told why (ours): it
    # retrieves the same subgraph, so the round finds nothing new. A STOP or a copy of the prompt in reply
    # leaves the restated question standing, so this never ends the loop earlier than the paper's prompt.
    # Qwen2.5-1.5B restated the question in 20 of 33 evolutions on the first 20 + 20 dev questions; asked
    # again (at K = 1) it wrote a new question for 5 of 21. In replays F1 rose HotpotQA 59.2 -> 59.6 and
    # MuSiQue 40.2 -> 42.7 (1 better, none worse, each); with every call sent, no MuSiQue answer changed
    # (36.6 both), at 0.75 calls and 1.0 s a question more. False: the restated question stands.
    restated_query_again: bool = True
    # ablation switches
    evolve_query: bool = True  # off: every round retrieves for the original question
    evolve_subgraph: bool = True  # off: no on-the-fly extraction, no refinement; plain retrieval
    use_communities: bool = True  # off: community nodes are not retrieved
