"""The embedding tail after the derived stages: what the worker still had queued and the nodes nobody
handed it are both embedded, and the tail is timed in parts (queue, finding missing nodes, embedding
them; the worker's encoding and writing) so that a build's figures say where its time went."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support import HashEmbedder
from thinkgraph.index.derived import _embed_tail
from thinkgraph.index.embedding_stage import EmbedWorker, WorkerEffort
from thinkgraph.index.stages import StageTimer
from thinkgraph.models import Node
from thinkgraph.store.sqlite import SQLiteStore

TAIL_PARTS = ("embed tail: the worker's queue", "embed tail: finding nodes without vectors",
              "embed tail: nodes without vectors", "embed tail: encoding", "embed tail: writing")


def test_worker_effort_subtracts_field_by_field() -> None:
    later, earlier = WorkerEffort(10, 3.5, 1.25), WorkerEffort(4, 1.0, 0.25)
    assert later - earlier == WorkerEffort(6, 2.5, 1.0)


def test_tail_embeds_the_queue_and_the_nodes_nobody_handed_over(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    queued = [Node(f"p:{i}", "passage", f"passage number {i}") for i in range(300)]
    unseen = [Node(f"c:{i}", "community", f"community summary {i}") for i in range(40)]
    store.add_nodes(queued + unseen)
    embedder = HashEmbedder(dim=16)
    timer = StageTimer()

    async def run() -> tuple[WorkerEffort, WorkerEffort]:
        async with EmbedWorker(store, embedder, ["passage", "community"]) as worker:
            await worker.submit(queued)  # one full batch goes to the worker, 44 wait in its pending list
            before = worker.effort()
            await _embed_tail(store, worker, ["passage", "community"], timer)
            return before, worker.effort()

    before, after = asyncio.run(run())
    assert store.nodes_missing_vectors(["passage", "community"]) == []
    assert after.embedded == 340
    assert (after - before).embedded == 340 - before.embedded
    assert after.encode_s >= before.encode_s and after.write_s >= before.write_s
    assert set(TAIL_PARTS) <= set(timer.seconds)
    assert all(timer.seconds[part] >= 0.0 for part in TAIL_PARTS)


def test_tail_with_no_types_embeds_only_the_queue(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    store.add_nodes([Node("p:1", "passage", "alone")])
    timer = StageTimer()

    async def run() -> int:
        async with EmbedWorker(store, HashEmbedder(dim=16), ["passage"]) as worker:
            await _embed_tail(store, worker, [], timer)
            return worker.embedded

    assert asyncio.run(run()) == 0
    assert len(store.nodes_missing_vectors(["passage"])) == 1  # nothing asked for passages
