"""Work done by separate processes in the store tests (importable by spawned workers)."""

from __future__ import annotations

from thinkgraph.models import Edge, Node
from thinkgraph.store import open_store

ROUNDS = 20


def contend(args: tuple[str, int]) -> list[str]:
    """Increment a counter, try to claim every key, add the same nodes and edges (as concurrent
    upserts of one document would); returns the keys this worker won."""
    location, worker = args
    store = open_store(location, create=False)
    won = []
    try:
        for i in range(ROUNDS):
            store.increment_meta("counter")
            if store.claim("doc", f"k{i}", f"worker-{worker}", 60):
                won.append(f"k{i}")
            with store.transaction():
                store.add_nodes([Node(f"ent:{i}", "entity", f"E{i}")])
                if i:
                    store.add_edges([Edge(f"ent:{i - 1}", f"ent:{i}", "OPENREL", props={"predicate": "next"})])
    finally:
        store.close()
    return won
