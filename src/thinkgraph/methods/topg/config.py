"""ToPG defaults, each a named, documented value: the paper's (Table 5, §3.2, App. A-B) unless marked
"ours"."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The project-wide switch `retrieval` (tog3, a2rag; benchmarks/retrieval_compare.py): "paper" asks for
# the paper's form, "shared" for the project's shared walk. For ToPG it names an entry.
RETRIEVAL_ALIASES = {"paper": "suggest_naive", "shared": "ppr_passages"}


class ToPGConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lam: float = Field(0.5, ge=0.0, le=1.0)  # lambda: weight of T_s in M; 1 is the no-T_n ablation (§2.2, App. D)
    damping: float = 0.85  # PPR damping on M
    theta: float = 0.4  # cosine threshold of T_n
    tau: float = 0.1  # temperature of T_n
    subgraph_size: int = 500  # l: GExtract's size, in propositions
    restart: float = 0.15  # restart probability of GExtract's random walk (ours: the paper gives none)
    k: int = Field(20, ge=1)  # propositions per Suggest call, SuggestNaive's included (k = 20, ToPG §3.2, Table 5)
    mode: Literal["naive", "local", "global"] = "local"
    # How the walk enters the graph, where Naive, Local (Alg. 1 l. 2) and Global (Alg. 2 l. 6) call
    # SuggestNaive. "suggest_naive" (the paper's, §2.3.1): the k propositions most similar to the
    # question by cosine. "ppr_passages" (ours, the former default): the project's passage walk (question
    # entity links, fact seeds, PPR over entities and passages with its second hop, as `ppr`) ranks the
    # passages, and the best entry_per_passage proposition(s) of each (naming a seed entity of the walk
    # first, then by cosine) enter, best passage first, up to k. Either way Select, Suggest-local on M
    # and Eval follow, and the passages returned are those of the facts they collected, in their order.
    # "suggest_hybrid" (ours, a measured deviation): SuggestNaive's cosine ranking fused by reciprocal
    # rank with BM25 over the propositions and with those naming an entity the question names.
    entry: Literal["suggest_naive", "suggest_hybrid", "ppr_passages"] = "suggest_naive"
    entry_per_passage: int = Field(1, ge=1)  # with entry = "ppr_passages" only (ours)
    # Select (Eq. 2). False is the no-Select ablation: every suggestion is kept, with an LLM too; Eval and
    # NextQ still run. (Naive mode has no Select in the paper either.)
    select: bool = True
    # Select's bound in Local mode (ours; None: the paper's unbounded pruning). Asked to keep the facts
    # that help, Qwen2.5-1.5B kept all 20 suggestions on 59 of 99 Select calls (MuSiQue and HotpotQA dev,
    # first 20 each), so Suggest-local was seeded on everything the entry found. Asked for at most
    # select_max, best first, the first select_max numbers of its reply are kept; Qwen still listed all 20
    # on 67 of 99 calls, so with it the bound mostly keeps Suggest's first five: a smaller seed for
    # Suggest-local and fewer facts to read, not a choice (a model that follows the bound chooses).
    # Measured at 5 with Qwen (same questions): MuSiQue 12.7 -> 22.0 F1 (2 better, 1 worse), HotpotQA
    # 50.0 -> 48.3 (2 and 2); on idle cores with every call sent (MuSiQue, one process): 22.0 F1 at 35.0 s
    # a question (median), 2.59 times `ppr`'s 13.5 s, 2,269 prompt tokens; unbounded 12.7 F1 at 48.9 s
    # (3.62 times), 3,332 tokens.
    select_max: int | None = Field(5, ge=1)
    # Select's prompt and reply (ours). "list" (the default, the former form): the question first and a
    # bare {"keep": [...]}; Qwen2.5-1.5B lists every suggestion on most calls, so with select_max the first
    # five of Suggest's order are kept. "reasoned" (a switch): the suggested facts first and the question
    # last (the one prompt layout), a one-sentence reason written before the numbers, whose count the
    # schema bounds at select_max (the server's grammar ends the list there). Told so to choose, Qwen kept
    # one or two facts, often the wrong ones: on the first Select of HotpotQA's first 20 dev questions the
    # kept facts' passages held fewer gold passages than Suggest's first five
    # (benchmarks/topg_select_forms.py, docs/answer-quality.md), so "list" stays the default.
    select_form: Literal["reasoned", "list"] = "list"
    max_iter: int = 3  # Local mode iterations (the paper evaluates 1 and 3)
    # Local mode's answer. "shared" (the default): Eval is a stop judgement (reason first, "yes"/"no"
    # last) and the one reader (methods/reader.py) answers from the passages the collected facts come
    # from, the facts beside them; after max_iter the reader answers from what was collected (it may
    # abstain). "paper": Eval's JSON verdict carries the answer, written from the propositions alone.
    reader: Literal["shared", "paper"] = "shared"
    # Passages the shared reader reads: those of the first collected facts in the reader's order
    # (reader_order) (ours: 5, as `ppr` reads; reader_facts of the facts are noted beside them).
    reader_passages: int = Field(5, ge=1)
    # The collected facts noted beside those passages, the first in the reader's order (ours: 0, none;
    # 30 before 2026-12-02). A fact shown apart from its passage misleads a small reader: beside the Leland
    # question "The film was directed by Andrew Neel and Luke Meyer." (another film's passage) was named,
    # and a fact on Tibetan translations answered Haymo of Faversham's era's language. Measured with
    # Qwen2.5-1.5B on the first 20 dev questions, the same Select and Eval calls, the walk's passages
    # second (reader_fill): HotpotQA 44.2 -> 68.3 F1 with no facts (5 better, 1 worse), MuSiQue 38.7 ->
    # 45.8 (3 better, 1 worse) (docs/answer-quality.md, sixteenth session).
    reader_facts: int = Field(0, ge=0)
    # The order of those passages (and of the facts noted beside them). "walk" (the default, ours): the
    # collected facts ranked by PPR on M among themselves, restarting at each by its c~
    # (Suggester.rank_collected): a fact near the question, and one the walk reaches from such facts
    # through a shared entity or passage (the next hop), come before the unconnected ones. Qwen2.5-1.5B's
    # Select kept all 20 suggestions on 59 of 99 calls (told to keep at most 5 it still listed all 20 on
    # most), so in the collected order the entry's first facts filled the five passages and a gold passage
    # the walk had collected stood at rank 8-19 (HotpotQA dev, 7 of the first 20). Measured with Qwen on
    # the first 20 dev questions each: HotpotQA 40.0 -> 50.0 (3 better, 1 worse), MuSiQue 18.6 -> 12.7
    # (2 better, 2 worse; there a gold passage was not among the collected facts' passages at all on 13 of 20).
    # "collected" (ours, the former default): the facts' order (the entry's by cosine first). "rounds"
    # (ours): the passages of what the entry, then each iteration, added, in turn (MuSiQue 26.2 -> 23.6
    # against "collected" at the time, no HotpotQA answer of the first 10 changed).
    reader_order: Literal["walk", "rounds", "collected"] = "walk"
    # What the reader reads past its facts' passages (ours; local mode's shared reader: reader = "paper"
    # and the other modes read no passages this way). "walk" (the default): the passages of the
    # first facts (in the reader's order), all but reader_fill_passages of the reader's, and the passages
    # the shared walk (`ppr`'s personalized PageRank over entities and passages,
    # retrieval/seeded_walk.py) ranks when it restarts at the entities the first reader_passages facts
    # name, the fact at rank r weighing 1 / r**2, with the question's passage prior (methods/topg/fill.py);
    # then the other facts' passages. On a bridge question the pool holds the sentence that names the
    # bridge ("Maximum Overdrive", filmed near Leland) and not the bridge's own passage, two steps away
    # through the entity both name. "none": the facts' passages alone, the former reader. Measured with
    # Qwen2.5-1.5B on the first 20 dev questions, the same Select and Eval calls (the reader's alone
    # differing): HotpotQA 48.3 -> 50.8 F1 (2 better, 1 worse), MuSiQue 38.1 -> 44.4 (5 better, 2 worse);
    # the gold passages among the reader's five on HotpotQA 75.0 % -> 90.0 (`ppr`'s 95.0;
    # benchmarks/reader_fill.py --method topg; records in benchmarks/results/answer_quality_415). Since
    # 2026-12-02 the walk's passages are read second, after the first fact's (the next hop beside the
    # entry; retrieval/fusion.py `filled`): with no facts noted, HotpotQA 54.6 -> 68.3 (3 better, 0 worse),
    # MuSiQue 42.0 -> 45.8 (1 / 1) against reading them after all the facts' own.
    reader_fill: Literal["walk", "none"] = "walk"
    # The passages of the reader's that the walk takes at least (ours: 2, the hops of a bridge question).
    reader_fill_passages: int = Field(2, ge=0)
    # P(yes) at or above which Eval stops the loop, where the server gives log-probabilities (ours: 0.5,
    # the point benchmarks/calibrate_verdicts.py chose on the dev questions, where P(yes) written after the
    # reason is almost always below 0.1 or above 0.9); else the written verdict decides.
    eval_threshold: float = Field(0.5, ge=0.0, le=1.0)
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

    @model_validator(mode="before")
    @classmethod
    def _retrieval_alias(cls, data: Any) -> Any:
        """``retrieval = "paper" | "shared"``, the project-wide switch, read as the entry it names."""
        if not isinstance(data, dict) or "retrieval" not in data:
            return data
        data = dict(data)
        retrieval = data.pop("retrieval")
        if retrieval not in RETRIEVAL_ALIASES:
            raise ValueError(f"retrieval must be one of {sorted(RETRIEVAL_ALIASES)} (or set entry), not {retrieval!r}")
        entry = RETRIEVAL_ALIASES[retrieval]
        if data.setdefault("entry", entry) != entry:
            raise ValueError(f"retrieval={retrieval} names entry={entry}, but entry={data['entry']} was given")
        return data
