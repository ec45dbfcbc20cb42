"""Entity resolution. Names are unified by normalisation (they share one id); entities whose
embeddings have cosine >= threshold are linked by SYNONYM edges (ToPG App. A), which keep the
decision auditable and reversible instead of merging nodes."""

from __future__ import annotations

import numpy as np

from thinkgraph.models import Edge, EdgeType, NodeType
from thinkgraph.store.base import GraphStore

BLOCK_ROWS = 2048


def synonym_pairs(ids: list[str], vectors: np.ndarray, threshold: float) -> list[tuple[str, str, float]]:
    """All pairs (i < j) with cosine >= threshold, computed block by block to bound memory."""
    pairs: list[tuple[str, str, float]] = []
    n = len(ids)
    for start in range(0, n, BLOCK_ROWS):
        block = vectors[start:start + BLOCK_ROWS] @ vectors.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if i < c:
                pairs.append((ids[i], ids[c], float(block[r, c])))
    return pairs


def resolve_entities(store: GraphStore, threshold: float) -> int:
    """Replace all SYNONYM edges by those the current entity vectors give. Returns their count."""
    ids, vectors = store.get_vectors([NodeType.ENTITY])
    order = sorted(range(len(ids)), key=ids.__getitem__)  # id order: the same edges whatever the write order
    ids, vectors = [ids[i] for i in order], vectors[order] if ids else vectors
    with store.transaction():
        store.delete_edges_of_type(EdgeType.SYNONYM)
        if not ids:
            return 0
        pairs = synonym_pairs(ids, vectors, threshold)
        store.add_edges(Edge(a, b, EdgeType.SYNONYM, weight=c, props={"cosine": round(c, 4)})
                        for a, b, c in pairs)
    return len(pairs)
