"""Parts of the build's stages measured on a built index (benchmarks/scale.py builds them), for the
reasons behind the growth exponents in docs/scaling.md:

    python benchmarks/scale_parts.py insert-cache --index scale100000.db   # random-keyed inserts per page-cache size
    python benchmarks/scale_parts.py missing-vectors --index scale1000000.db  # finding nodes without vectors
    python benchmarks/scale_parts.py leiden --index scale1000000.db  # entity graph read, igraph Leiden calls

Nothing is written: the inserts run in a transaction that is rolled back."""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import time
from collections.abc import Callable
from typing import Any

CACHES_KIB = (16_384, 65_536, 262_144, 1_048_576)
TYPES = ("document", "chunk", "entity", "triplet", "community", "proposition")


def insert_cache(index: str, rows: int, repeats: int) -> dict[str, Any]:
    """Microseconds a row of inserting ``rows`` community-membership-like edges (random content-hash
    keys, members drawn from the index's entities) at each page-cache size, rolled back each time."""
    db = sqlite3.connect(index, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    entities = [r[0] for r in db.execute("SELECT id FROM nodes WHERE type='entity' LIMIT 200000")]
    per_row: dict[int, list[float]] = {c: [] for c in CACHES_KIB}
    for r in range(repeats):
        for cache in CACHES_KIB:
            data = []
            for i in range(rows):
                key = hashlib.sha1(f"{r}:{cache}:{i}".encode()).hexdigest()
                community = hashlib.sha1(f"{r}:{cache}:{i // 14}".encode()).hexdigest()[:16]
                data.append((f"e:{key}", f"comm:{community}", entities[int(key[:8], 16) % len(entities)],
                             "SUMMARY_FOR", 1.0, "{}"))
            db.execute(f"PRAGMA cache_size=-{cache}")
            db.execute("BEGIN")
            started = time.perf_counter()
            db.executemany("INSERT OR IGNORE INTO edges(id, src, dst, type, weight, props) VALUES (?,?,?,?,?,?)", data)
            per_row[cache].append((time.perf_counter() - started) / rows * 1e6)
            db.execute("ROLLBACK")
    edges = db.execute("SELECT count(*) FROM edges").fetchone()[0]
    return {"edges": edges, "rows": rows, "us_per_row": {c: [round(x, 1) for x in v] for c, v in per_row.items()},
            "median_us_per_row": {c: round(statistics.median(v), 1) for c, v in per_row.items()}}


def missing_vectors(index: str) -> dict[str, Any]:
    """The query the embedding tail used (rows of the asked types, each id looked up among the vectors)
    against the store's (the two key indexes side by side), twice each: cold-ish, then warm."""
    from thinkgraph.store.sqlite import SQLiteStore

    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    marks = ",".join("?" * len(TYPES))
    by_type = (f"SELECT id, type, text, props FROM nodes WHERE type IN ({marks})"
               " AND id NOT IN (SELECT node_id FROM vectors) ORDER BY rowid")
    store = SQLiteStore(index, create=False)
    out: dict[str, Any] = {"by_type_s": [], "key_indexes_s": []}
    for _ in range(2):
        out["by_type_s"].append(_seconds(lambda: len(db.execute(by_type, TYPES).fetchall())))
        out["key_indexes_s"].append(_seconds(lambda: len(store.nodes_missing_vectors(list(TYPES)))))
    return out


def leiden(index: str) -> dict[str, Any]:
    """Reading the entity graph, then hierarchical Leiden with each igraph call timed: how many run at
    the top level and what each takes."""
    import igraph

    from thinkgraph.config import TOG3_MAX_CLUSTER_SIZE
    from thinkgraph.graph.leiden import hierarchical_leiden
    from thinkgraph.index.communities import _entity_graph
    from thinkgraph.store.sqlite import SQLiteStore

    started = time.perf_counter()
    graph = _entity_graph(SQLiteStore(index, create=False))
    read_s = time.perf_counter() - started
    calls: list[tuple[int, float]] = []
    real = igraph.Graph.community_leiden

    def timed(self: igraph.Graph, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        found = real(self, *args, **kwargs)
        calls.append((self.vcount(), time.perf_counter() - began))
        return found

    igraph.Graph.community_leiden = timed
    try:
        started = time.perf_counter()
        found = hierarchical_leiden(len(graph.nodes), graph.edges, graph.weights,
                                    max_cluster_size=TOG3_MAX_CLUSTER_SIZE, seed=42)
        leiden_s = time.perf_counter() - started
    finally:
        igraph.Graph.community_leiden = real
    top = [s for n, s in calls if n == len(graph.nodes)]
    return {"entities": len(graph.nodes), "edges": len(graph.edges), "read_s": round(read_s, 2),
            "leiden_s": round(leiden_s, 2), "top_level_calls_s": [round(s, 2) for s in top],
            "other_calls": len(calls) - len(top), "other_calls_s": round(sum(s for n, s in calls
                                                                             if n != len(graph.nodes)), 2),
            "communities": len(found)}


def _seconds(run: Callable[[], int]) -> float:
    started = time.perf_counter()
    run()
    return round(time.perf_counter() - started, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("insert-cache", "missing-vectors", "leiden"):
        one = sub.add_parser(name)
        one.add_argument("--index", required=True)
        if name == "insert-cache":
            one.add_argument("--rows", type=int, default=250_000)
            one.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if args.command == "insert-cache":
        print(json.dumps(insert_cache(args.index, args.rows, args.repeats)))
    elif args.command == "missing-vectors":
        print(json.dumps(missing_vectors(args.index)))
    else:
        print(json.dumps(leiden(args.index)))


if __name__ == "__main__":
    main()
