"""Writes to a workspace (upsert, re-index, delete, curation), one at a time per workspace, each on
its own connection so that asks on the reader never see a half-written batch. Uploads may run in the
background; their progress (stage, done, total) is kept here while they run, for the document list.
Progress lives in this process only: with several workers, another worker shows the stored status
(pending, processing, done, failed) without the stage."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import InputError, ThinkgraphError
from thinkgraph.index.pipeline import IndexReport
from thinkgraph.models import SourceDocument
from thinkgraph.service.workspaces import Workspaces

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Job:
    doc_id: str
    title: str
    stage: str = "queued"
    done: int = 0
    total: int | None = None
    error: str | None = None

    def progress(self, stage: str, done: int, total: int | None) -> None:
        self.stage, self.done, self.total = stage, done, total


@dataclass
class Jobs:
    spaces: Workspaces
    running: dict[tuple[str, str], Job] = field(default_factory=dict)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    async def write(self, ws: str, change: Callable[[ThinkGraph], T]) -> T:
        """Run ``change`` on a writer of the workspace, after the writes queued before it."""
        reader = self.spaces.get(ws)
        async with self.spaces.lock(ws):
            def run() -> T:
                with ThinkGraph(reader.store.location, settings=reader.settings, embedder=reader.embedder,
                                backend=reader._backend, create=False) as writer:  # noqa: SLF001
                    return change(writer)

            result = await asyncio.to_thread(run)
        reader.refresh()
        return result

    async def index(self, ws: str, doc: SourceDocument, job: Job | None = None) -> IndexReport:
        job = self.running[(ws, doc.id)] = job or Job(doc.id, doc.title)
        try:
            report = await self.write(ws, lambda writer: writer.add_documents([doc], progress=job.progress))
            if report.skipped and not (report.indexed or report.updated or report.unchanged):
                raise InputError("; ".join(report.skipped))  # e.g. the same text as another document
        except ThinkgraphError as exc:  # kept in the list as failed, with the reason, until deleted
            job.stage, job.error = "failed", str(exc)
            raise
        self.running.pop((ws, doc.id), None)
        return report

    def index_later(self, ws: str, doc: SourceDocument) -> Job:
        """Queue the document; its job shows in the list until the index has its status."""
        job = self.running[(ws, doc.id)] = Job(doc.id, doc.title)
        task = asyncio.create_task(self._background(ws, doc, job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job

    async def _background(self, ws: str, doc: SourceDocument, job: Job) -> None:
        try:
            await self.index(ws, doc, job)
        except ThinkgraphError as exc:
            log.warning("indexing %s in %s failed: %s", doc.id, ws, exc)

    def forget(self, ws: str, doc_id: str) -> None:
        self.running.pop((ws, doc_id), None)

    def of(self, ws: str) -> dict[str, Job]:
        return {doc_id: job for (w, doc_id), job in self.running.items() if w == ws}

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
