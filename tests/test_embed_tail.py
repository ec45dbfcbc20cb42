"""The embedding tail after the derived stages: what the worker still had queued and the nodes nobody
handed it are both embedded, and the tail is timed in parts (queue, finding missing nodes, embedding
them; the worker's encoding and writing) so that a build's figures say where its time went."""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.index.derived import _embed_tail, derived_page_cache_kib
from thinkgraph.index.embedding_stage import EmbedWorker, WorkerEffort
from thinkgraph.index.stages import StageTimer
from thinkgraph.models import Node, SourceDocument
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


def test_derived_page_cache_is_an_eighth_of_the_index_up_to_the_cap() -> None:
    assert derived_page_cache_kib(13_400_000_000, 4096) == 13_400_000_000 // 8 // 1024  # 1M passages: 1.6 GiB
    assert derived_page_cache_kib(100 * 2**30, 4096) == 4096 * 1024
    assert derived_page_cache_kib(0, 4096) == 0  # (the store keeps its writer's own cache)


@pytest.mark.parametrize("cap_mb", [4096, 0])
def test_the_derived_stages_ask_for_the_page_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     cap_mb: int) -> None:
    asked: list[tuple[int, int]] = []
    real = SQLiteStore.page_cache

    def spy(self: SQLiteStore, kib: int) -> AbstractContextManager[None]:
        asked.append((kib, self.size_bytes()))
        return real(self, kib)

    monkeypatch.setattr(SQLiteStore, "page_cache", spy)
    settings = Settings()
    settings.index.derived_page_cache_mb = cap_mb
    with ThinkGraph(tmp_path / "i.db", settings=settings, embedder=HashEmbedder()) as tg:
        tg.add_documents([SourceDocument(id="a", title="Alma", text="Alma Sholte founded Kesmoor University in 1892.",
                                         source="t")])
    assert len(asked) == 1
    kib, size = asked[0]
    assert kib == min(size // 8 // 1024, cap_mb * 1024)


def test_a_page_cache_past_sqlites_range_is_its_largest_not_none(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with store.page_cache(2**31 + 5):
        assert int(store._db.execute("PRAGMA cache_size").fetchone()[0]) == -(2**31 - 1)
    assert int(store._db.execute("PRAGMA cache_size").fetchone()[0]) == -262_144
