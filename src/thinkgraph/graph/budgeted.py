"""Greedy budgeted community selection (ToPG Alg. 3). Pure function."""

from __future__ import annotations

from collections.abc import Sequence, Set


def greedy_budgeted_communities(anchors: Set[int], communities: Sequence[Set[int]], budget: int) -> list[int]:
    """Indices of communities chosen greedily by (uncovered anchors they contain) / (their size) until
    every anchor is covered, the node budget is spent, or no community adds coverage. Ties go to the
    lower index. The paper writes |nodes(c) minus S'| over covered *anchors* S'; counting only anchors
    is what its text describes ("yet-uncovered anchor propositions") and lets the loop end when S' = S."""
    covered: set[int] = set()
    chosen: list[int] = []
    used = 0
    remaining = set(anchors)
    while remaining and used < budget:
        best, best_score = -1, 0.0
        for i, community in enumerate(communities):
            if i in chosen or not community:
                continue
            score = len(remaining & community) / len(community)
            if score > best_score:
                best, best_score = i, score
        if best < 0:
            break
        chosen.append(best)
        covered |= communities[best] & anchors
        remaining -= communities[best]
        used += len(communities[best])
    return chosen
