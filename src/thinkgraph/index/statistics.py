"""What `inspect` shows of an index: counts per node and edge type, documents by status, communities
by level, derived stages, timings, extraction failures, LLM usage and the negotiated output forms."""

from __future__ import annotations

from typing import Any

from thinkgraph.store.base import GraphStore

FAILURE_EXAMPLES = 10  # failures shown with their messages by `inspect`


def documents_by_status(store: GraphStore) -> dict[str, int]:
    by_status: dict[str, int] = {}
    for d in store.list_documents():
        by_status[str(d.status)] = by_status.get(str(d.status), 0) + 1
    return by_status


def community_levels(store: GraphStore) -> dict[str, int]:
    levels: dict[str, int] = {}
    for node in store.iter_nodes("community"):
        key = str(node.props.get("level", 0))
        levels[key] = levels.get(key, 0) + 1
    return dict(sorted(levels.items()))


def index_stats(store: GraphStore) -> dict[str, Any]:
    from thinkgraph.index.stages import graph_version, is_outdated, load_timings, missing_stages
    from thinkgraph.llm.dialects import remembered_forms

    return {
        "index": store.describe(),
        "size_bytes": store.size_bytes(),
        "embedding_model": store.get_meta("embed_model"),
        "embedding_dim": store.get_meta("embed_dim"),
        "extractor": store.get_meta("extractor"),
        "documents": documents_by_status(store),
        "nodes": store.count_nodes(),
        "edges": store.count_edges(),
        "communities_by_level": community_levels(store),
        "graph_version": graph_version(store),
        "missing_stages": missing_stages(store),
        "stages_outdated": is_outdated(store),
        "stage_timings": load_timings(store),
        "extraction_failures": store.failure_counts(),
        # why they failed, the first few: the count alone left a user reading the database for the reason
        "failure_examples": [{"stage": stage, "key": key, "message": message[:300], "count": count}
                             for stage, key, message, count in store.failures()[:FAILURE_EXAMPLES]],
        "llm_usage": store.usage_totals(),
        "llm_structured_output": remembered_forms(store),
    }
