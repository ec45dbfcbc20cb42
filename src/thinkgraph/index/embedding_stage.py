"""Embedding stage: every node of the configured types gets a vector from the one encoder, and the
index manifest records that encoder so a mismatched model is refused."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import EmbeddingMismatchError
from thinkgraph.models import Node, NodeType
from thinkgraph.store.base import GraphStore

EMBED_BATCH = 256
QUEUED_BATCHES = 4  # batches waiting for the worker before producers wait (bounded memory)


def node_embedding_text(node: Node) -> str:
    """What the encoder sees: chunks carry their document title, as dense passage retrieval does."""
    if node.type == NodeType.CHUNK and node.props.get("title"):
        return f"{node.props['title']}\n{node.text}"
    return node.text


def check_embedding_manifest(store: GraphStore, embedder: Embedder) -> None:
    recorded = store.get_meta("embed_model")
    if recorded is None:
        return
    if recorded != embedder.name:
        raise EmbeddingMismatchError(
            f"this index was built with embedding model {recorded!r} (dimension "
            f"{store.get_meta('embed_dim')}); the configured model is {embedder.name!r}. "
            "Configure the same model or build a new index")


def record_embedding_manifest(store: GraphStore, embedder: Embedder, dim: int) -> None:
    recorded_dim = store.get_meta("embed_dim")
    if recorded_dim is not None and int(recorded_dim) != dim:
        raise EmbeddingMismatchError(f"index vectors have dimension {recorded_dim}; the model gives {dim}")
    if store.get_meta("embed_model") is None:
        store.set_meta("embed_model", embedder.name)
        store.set_meta("embed_dim", str(dim))


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


class EmbedWorker:
    """Embeds nodes beside the LLM calls: producers hand over nodes as they are committed; fixed
    batches of EMBED_BATCH (in commit order, so two runs embed the same batches) are encoded in a
    worker thread and written, while the event loop keeps issuing LLM calls. The queue is bounded,
    so a producer faster than the encoder waits instead of piling nodes up in memory."""

    def __init__(self, store: GraphStore, embedder: Embedder, node_types: Iterable[str],
                 progress: Callable[[int, int], None] | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.node_types = frozenset(str(t) for t in node_types)
        self.progress = progress
        self.embedded = 0
        self.busy_s = 0.0  # the worker's own time (it overlaps other stages)
        self._pending: list[Node] = []
        self._queue: asyncio.Queue[list[Node] | None] = asyncio.Queue(maxsize=QUEUED_BATCHES)
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self._encode_lock = asyncio.Lock()

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

    async def submit(self, nodes: Iterable[Node]) -> None:
        self._pending.extend(n for n in nodes if str(n.type) in self.node_types)
        while len(self._pending) >= EMBED_BATCH:
            batch, self._pending = self._pending[:EMBED_BATCH], self._pending[EMBED_BATCH:]
            await self._put(batch)

    async def flush(self) -> None:
        """Wait until every submitted node has its vector written."""
        if self._pending:
            batch, self._pending = self._pending, []
            await self._put(batch)
        await self._queue.join()
        self._raise_if_failed()

    async def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for texts (community summaries) on the worker's thread, one encoder at a time."""
        async with self._encode_lock:
            started = time.perf_counter()
            vectors = await asyncio.to_thread(self.embedder.embed, list(texts))
            self.busy_s += time.perf_counter() - started
            return vectors

    async def _put(self, batch: list[Node]) -> None:
        self._raise_if_failed()
        await self._queue.put(batch)

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    async def _work(self) -> None:
        while True:
            batch = await self._queue.get()
            try:
                if batch and self._error is None:
                    vectors = await self.encode([node_embedding_text(n) for n in batch])
                    await asyncio.to_thread(self._write, [n.id for n in batch], vectors)
                    self.embedded += len(batch)
                    if self.progress:
                        self.progress(self.embedded, self.embedded + len(self._pending))
            except Exception as exc:  # kept and raised to the producer at its next submit or flush
                self._error = exc
            finally:
                self._queue.task_done()

    def _write(self, ids: list[str], vectors: np.ndarray) -> None:
        started = time.perf_counter()
        with self.store.transaction():
            record_embedding_manifest(self.store, self.embedder, vectors.shape[1])
            self.store.put_vectors(ids, vectors)
        self.busy_s += time.perf_counter() - started
