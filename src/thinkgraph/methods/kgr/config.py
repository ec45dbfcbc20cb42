"""Settings of `kgr` (KG-grounded CoT / ToT / GoT, "Grounding LLM Reasoning with Knowledge Graphs"),
with the paper's defaults (§5: n = 10 steps; ToT/GoT branching k = 3 and retained t = 3)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

MIN_GRAPH_CHARS = 500  # the least graph definition worth showing (the node types and a few edge types)
DEFINITION_CHARS_PER_TOKEN = 3  # conservative, as the agent's scratchpad bound (methods/kgr/agent.py)


class KGRConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strategy: Literal["cot", "tot", "got"] = "cot"
    interaction: Literal["agent", "explore"] = "agent"
    steps: int = Field(10, ge=1)  # n: reasoning steps of a chain (CoT) and tree depth D_max (ToT/GoT)
    depth: int | None = Field(None, ge=1)  # D_max when it should differ from `steps`
    k: int = Field(3, ge=1)  # branching factor: candidate thoughts per expanded state
    t: int = Field(3, ge=1)  # states retained
    evaluator: Literal["select", "score"] = "select"
    # Eq. 2 (§4.1): the t best states of the whole level go on (b = t), so the search is linear in
    # depth. "per_parent" keeps t states per expanded parent instead, the count App. E's table
    # writes, k (t^D - 1) / (t - 1) generations: exponential in depth.
    retain: Literal["global", "per_parent"] = "global"
    # d of Alg. 1. Ours: the paper gives no default; its §7 / Fig. 5 see Rouge-L rise steeply from depth 1
    # to 2 (36 -> 42), then 43 at 3 and a plateau after, so 3 takes the gain before the plateau.
    search_depth: int = Field(3, ge=1)
    retrieve_k: int = Field(1, ge=1)  # nodes RetrieveNode returns (Graph-CoT returns the best one)
    max_neighbors: int = Field(50, ge=1)  # neighbours listed in one observation or pruning prompt
    max_observation_chars: int = Field(4000, ge=200)
    # Ours, not the paper's: characters of the graph definition in each agent and explore prompt. A
    # GRBench graph's definition (the paper's setting) is a few hundred to two thousand characters and
    # is shown whole; a corpus-built index has one edge type per OpenIE predicate and its inverse
    # (MuSiQue: 20,126, a 472,174-character definition, past any context window). Above the bound
    # the most frequent node and edge types are listed with their counts, and the agent gets one more
    # action, EdgeTypes[node id], to list the edge types of a node (explore lists them per entity).
    # The bound also shrinks to a quarter of the model's context window (at 3 characters a token), so a
    # small window keeps room for the examples, the steps and the reply.
    graph_chars: int = Field(4000, ge=MIN_GRAPH_CHARS)
    # Explore's entity linking (the paper leaves it open): "shared" (ours) links an extracted name to
    # the index's entity of that name first, as `ppr` links question entities (retrieval/linking.py),
    # and to the nearest node text only when none is named; "vector": the nearest node text alone.
    entity_linking: Literal["shared", "vector"] = "shared"
    # Ours, not the paper's (a chain that reaches n steps ends "reached limit" there): the n-th step of
    # a chain (CoT), or the last level of a tree (ToT/GoT, one call per kept state), that has not
    # finished answers from what it found, its steps and the passages of the nodes it reached, read
    # by the shared reply reader (methods/replies.py); the outcome is then "finished_at_limit".
    # False: the paper's form.
    finish_at_limit: bool = True
    # The answer. "shared" (the default, on a corpus-built index): when the chain ends, finished or at
    # its limit, the one reader (methods/reader.py) answers from the passages behind the nodes it visited,
    # with the relations it followed (explore) or the agent's actions and what each found, and its own
    # Finish[...], beside them (then no finishing step runs at
    # the limit: the reader is it). "paper": the chain's Finish[...] is the answer. An imported typed
    # graph has no passages, so its answer is the chain's either way.
    reader: Literal["shared", "paper"] = "shared"
    # Passages the reader reads (ours): 5, as many as `ppr`'s reader and App. A of ToG-3 give it. The
    # passages the chain read first, then as ``reader_fill`` says.
    reader_passages: int = Field(5, ge=1)
    # What the reader reads past the passages the chain itself read (ours; a small model's chain read 1.1
    # passages a MuSiQue question and often stopped on the bridge entity: "Zimbabwe" for the waterfall of
    # the country of the Bubye River). "walk" (the default): the shared walk (`ppr`'s personalized
    # PageRank over entities and passages, retrieval/seeded_walk.py) restarted at the entities the chain
    # touched (those of the passages it read when it touched none), with the question's passage prior,
    # best first; it reaches a passage two relations past the chain, and weighs those that mention
    # several of its entities itself. "relations" (the former default): the passages mentioning the
    # chain's entities (the most of them first), then those mentioning the entities one edge from what it
    # reached, nearest the question first (``reader_relevance``). "none": the chain's passages and those
    # mentioning its entities alone. The former switch ``reader_neighbourhood`` (true / false) reads as
    # "relations" / "none". Measured with Qwen2.5-1.5B on the first 20 dev questions, the same chains
    # (commit 259078f's, replayed from the LLM cache; only the reader's call differs; 2026-12-02):
    # HotpotQA 50.0 -> 68.3 (4 better: the Leland film's director, the luau song's writer, the runner-up's
    # game's developer, the census town's population; 1 worse), MuSiQue 35.4 -> 39.5 (3 better, 2 worse),
    # against `ppr`'s 64.9 and 25.3; the gold passages among the reader's five: 87.5 % against 67.5 on
    # HotpotQA, 72.5 against 64.2 on MuSiQue (benchmarks/reader_fill.py --method kgr; records in
    # benchmarks/results/answer_quality_414).
    reader_fill: Literal["walk", "relations", "none"] = "walk"
    # How "nearest the question" is read for the passages of ``reader_fill = "relations"`` and "none"
    # (ours). "cosine" (the default): dense cosine to the question. "text": the hybrid text score (BM25
    # and dense cosine fused among them, as a2rag's stages order theirs; the [retrieval] settings'
    # lexical and dense_weight). Measured with Qwen2.5-1.5B on the first 20 dev questions under the
    # "relations" fill, the same chains (commit 5e2183d, one run, the reader's call alone differing):
    # HotpotQA 50.0 -> 60.0 with "text" (2 better: the publisher's city, the town's population),
    # MuSiQue 30.4 -> 22.0 (1 better, 3 worse: the badlands' state, the area code, the Reign of Terror's
    # date). No net gain over 40 questions, so cosine stays the default.
    reader_relevance: Literal["text", "cosine"] = "cosine"
    # Ours: a step reply with no action, one that repeats an earlier step (the same action, or one that
    # finds what an earlier step found), or a Finish that is a placeholder or names what no observation
    # says is asked again once in the same conversation (a bounded repair). In a CoT chain the repair
    # call counts against the n steps, so calls stay <= n.
    repair: bool = True
    few_shot: bool = True  # App. F: every prompt carries examples (ours, methods/kgr/examples.py)
    # How the agent sees the nodes of a corpus-built index (ours; methods/kgr/names.py). "ids" (the
    # default): the index's own ids, hashes a small model reads and copies at 14-20 tokens each. "short":
    # "E1", "P2", given in the order the question's agent is shown them. Measured with Qwen2.5-1.5B on
    # MuSiQue's first 20 (llama.cpp's server, every call sent): "short" read 1,947 tokens a question
    # against 2,730, wrote 334 against 448, took 8 calls against 10 and 26.3 s against 34.2 (3.6 against
    # 4.7 times `ppr`'s), but its chains went elsewhere and F1 fell 35.4 -> 20.3 (1 answer better, 5
    # worse), so the default keeps the ids. An imported KG's ids are shown as they are either way.
    node_names: Literal["short", "ids"] = "ids"
    # Our bound, not the paper's: LLM calls per question. The paper's ToT/GoT defaults (n = 10,
    # k = t = 3, agent) need 94 / 131 calls; explore mode costs several calls per step. When
    # spent, the best finished chain so far is the answer, or the outcome is "budget_reached".
    max_calls: int | None = Field(300, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _former_neighbourhood_switch(cls, data: Any) -> Any:
        """``reader_neighbourhood`` (the switch ``reader_fill`` replaced) as its fill."""
        if not isinstance(data, dict) or "reader_neighbourhood" not in data:
            return data
        if "reader_fill" in data:
            raise ValueError("reader_neighbourhood is the former name of reader_fill: give one of them")
        data = dict(data)
        former = data.pop("reader_neighbourhood")
        try:
            on = TypeAdapter(bool).validate_python(former)  # "false" too
        except ValidationError:
            raise ValueError(f"reader_neighbourhood (now reader_fill) is true or false, not {former!r}") from None
        data["reader_fill"] = "relations" if on else "none"
        return data

    @property
    def tree_depth(self) -> int:
        return self.depth or self.steps

    def definition_chars(self, context_window: int) -> int:
        """The graph definition's bound for a model of ``context_window`` tokens (``graph_chars`` at most)."""
        return max(MIN_GRAPH_CHARS, min(self.graph_chars, context_window * DEFINITION_CHARS_PER_TOKEN // 4))
