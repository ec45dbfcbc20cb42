"""ToG-3 settings; App. A numbers are marked, switches are the paper's ablations (Table 3)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ToG3Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = 5  # App. A: the Retriever returns the top-5 nodes
    context_passages: int = 5  # App. A: Responser/Reflector use the top-5 retrieved passages
    max_keywords: int = 10  # keyword expansion ('^'-separated); the paper leaves the count open
    horizon: int = 3  # K (Alg. 2)
    max_triplets_per_chunk: int = 2  # App. A, for triplets extracted on the fly
    max_triples_shown: int = 30
    # ablation switches
    evolve_query: bool = True  # off: every round retrieves for the original question
    evolve_subgraph: bool = True  # off: no on-the-fly extraction, no refinement; plain retrieval
    use_communities: bool = True  # off: community nodes are not retrieved
