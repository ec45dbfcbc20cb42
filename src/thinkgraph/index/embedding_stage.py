"""Embedding stage: every node of the configured types gets a vector from the one encoder, and the
index manifest records that encoder so a mismatched model is refused."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from thinkgraph.embed.base import Embedder
from thinkgraph.embed.manifest import check_embedding_manifest, node_embedding_text, record_embedding_manifest
from thinkgraph.models import Node, NodeType
from thinkgraph.store.base import GraphStore

EMBED_BATCH = 256
MAX_QUEUED_NODES = 65_536  # nodes waiting for the encoder before producers wait (about 30 MB of text)
PRIORITY_TYPES = frozenset({NodeType.ENTITY})  # synonyms and communities wait for these only


def embed_missing(store: GraphStore, embedder: Embedder, node_types: Iterable[str],
                  progress: Callable[[int, int], None] | None = None) -> int:
    """Embed nodes that have no vector yet; committed batch by batch. Returns how many were embedded."""
    check_embedding_manifest(store, embedder)
    todo = store.nodes_missing_vectors(list(node_types))
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start:start + EMBED_BATCH]
        vectors = embedder.embed([node_embedding_text(n) for n in batch])
        with store.transaction():
            record_embedding_manifest(store, embedder, vectors.shape[1])
            store.put_vectors([n.id for n in batch], vectors)
        if progress:
            progress(min(start + EMBED_BATCH, len(todo)), len(todo))
    return len(todo)


@dataclass(frozen=True, slots=True)
class WorkerEffort:
    """What an embedding worker has done so far: subtract two to see what a stage cost it."""

    embedded: int
    encode_s: float
    write_s: float

    def __sub__(self, earlier: WorkerEffort) -> WorkerEffort:
        return WorkerEffort(self.embedded - earlier.embedded, self.encode_s - earlier.encode_s,
                            self.write_s - earlier.write_s)


class EmbedWorker:
    """Embeds nodes beside the LLM calls: producers hand over nodes as they are committed; fixed
    batches of EMBED_BATCH (in commit order, so two runs embed the same batches) are encoded in a
    worker thread and written, while the event loop keeps issuing LLM calls.

    Entities go first (their own lane): synonyms and communities need only entity vectors, so the
    passages, documents and triplets still queued are embedded while the community summaries are
    being asked for. The queue is bounded (MAX_QUEUED_NODES), so memory stays bounded."""

    def __init__(self, store: GraphStore, embedder: Embedder, node_types: Iterable[str],
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.node_types = frozenset(str(t) for t in node_types)
        self.progress = progress
        self.embedded = 0
        self.encode_s = 0.0  # the worker's own time (it overlaps other stages): encoding,
        self.write_s = 0.0  # and writing the vectors into the store
        self._pending: dict[bool, list[Node]] = {True: [], False: []}  # lane True: entities
        self._ready: dict[bool, deque[list[Node]]] = {True: deque(), False: deque()}
        self._outstanding = {True: 0, False: 0}  # batches queued or being encoded, per lane
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    async def __aenter__(self) -> EmbedWorker:
        check_embedding_manifest(self.store, self.embedder)
        self._task = asyncio.create_task(self._work())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is None:
            return
        if exc[0] is None:
            await self.flush()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    @property
    def busy_s(self) -> float:
        return self.encode_s + self.write_s

    def effort(self) -> WorkerEffort:
        return WorkerEffort(self.embedded, self.encode_s, self.write_s)

    async def submit(self, nodes: Iterable[Node]) -> None:
        for node in nodes:
            if str(node.type) in self.node_types:
                self._pending[str(node.type) in PRIORITY_TYPES].append(node)
        for lane, pending in self._pending.items():
            while len(pending) >= EMBED_BATCH:
                await self._enqueue(lane, pending[:EMBED_BATCH])
                del pending[:EMBED_BATCH]

    async def flush(self, *, entities_only: bool = False) -> None:
        """Wait until every submitted node (or every entity) has its vector written."""
        lanes = (True,) if entities_only else (True, False)
        for lane in lanes:
            if self._pending[lane]:
                batch, self._pending[lane] = self._pending[lane], []
                await self._enqueue(lane, batch)
        async with self._changed:
            await self._changed.wait_for(lambda: self._error is not None
                                         or all(self._outstanding[lane] == 0 for lane in lanes))
        self._raise_if_failed()

    async def _encode(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        vectors = await asyncio.to_thread(self.embedder.embed, list(texts))
        self.encode_s += time.perf_counter() - started
        return vectors

    def _queued_nodes(self) -> int:
        return sum(len(b) for lane in self._ready.values() for b in lane)

    async def _enqueue(self, lane: bool, batch: list[Node]) -> None:
        self._raise_if_failed()
        async with self._changed:
            await self._changed.wait_for(lambda: self._queued_nodes() < MAX_QUEUED_NODES or self._error is not None)
            self._ready[lane].append(batch)
            self._outstanding[lane] += 1
            self._changed.notify_all()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    async def _work(self) -> None:
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: bool(self._ready[True] or self._ready[False]))
                lane = bool(self._ready[True])
                batch = self._ready[lane].popleft()
                self._changed.notify_all()  # room for producers
            try:
                if self._error is None:
                    vectors = await self._encode([node_embedding_text(n) for n in batch])
                    await asyncio.to_thread(self._write, [n.id for n in batch], vectors)
                    self.embedded += len(batch)
                    if self.progress:
                        self.progress(self.embedded, self.embedded + self._queued_nodes())
            except Exception as exc:  # kept and raised to the producer at its next submit or flush
                self._error = exc
            finally:
                async with self._changed:
                    self._outstanding[lane] -= 1
                    self._changed.notify_all()

    def _write(self, ids: list[str], vectors: np.ndarray) -> None:
        started = time.perf_counter()
        with self.store.transaction():
            record_embedding_manifest(self.store, self.embedder, vectors.shape[1])
            self.store.put_vectors(ids, vectors)
        self.write_s += time.perf_counter() - started
