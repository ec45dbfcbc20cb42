"""The indexing run: load -> chunk -> extract (LLM calls, many documents in flight) -> commit in
input order -> embed in a worker thread beside the calls; then the derived stages (derived.py).

Documents are extracted concurrently in a sliding window, so the LLM always has work; their records
are committed in input order, ``[index] batch_docs`` documents per transaction (and claimed the same
way), so the same input gives the same index whatever order the replies arrive in. An interrupted
run resumes where it stopped and repeats no finished LLM call (replies are cached in the index as
they arrive)."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from thinkgraph.config import IndexSettings
from thinkgraph.embed.base import Embedder
from thinkgraph.embed.manifest import check_embedding_manifest
from thinkgraph.errors import BudgetExceededError, ConfigError, LLMError, LLMUnavailableError
from thinkgraph.ids import content_hash
from thinkgraph.index.chunking import chunk_document
from thinkgraph.index.derived import Progress, update_derived
from thinkgraph.index.embedding_stage import EmbedWorker
from thinkgraph.index.extractor import Extractor
from thinkgraph.index.loaders import DUPLICATE, Skipped
from thinkgraph.index.records import GraphRecords, document_records, extraction_records
from thinkgraph.index.report import IndexReport, count_skip
from thinkgraph.index.stages import StageTimer, bump_graph_version, store_timings, writing
from thinkgraph.index.summaries import first_sentences, llm_summary
from thinkgraph.llm.service import LLM
from thinkgraph.models import Chunk, DocStatus, DocumentRecord, Node, SourceDocument
from thinkgraph.store.base import GraphStore
from thinkgraph.store.claims import WorkClaims
from thinkgraph.tokens import TokenCounter

log = logging.getLogger(__name__)

EXTRACT_STAGE = "extract"
MIN_WINDOW_DOCS = 8

__all__ = ["EXTRACT_STAGE", "IndexReport", "Indexer", "Progress", "update_derived"]


@dataclass(slots=True)
class _DocumentResult:
    """What one document's extraction produced, waiting for its turn to be committed."""

    records: GraphRecords
    done_keys: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (chunk key, message)
    chunks: int = 0
    chunks_failed: int = 0


class Indexer:
    def __init__(self, store: GraphStore, embedder: Embedder, extractor: Extractor, settings: IndexSettings,
                 *, llm: LLM | None = None, counter: TokenCounter | None = None,
                 progress: Progress | None = None, rebuild_derived: bool = False) -> None:
        self.store = store
        self.embedder = embedder
        self.extractor = extractor
        self.settings = settings
        self.llm = llm
        self.counter = counter or TokenCounter()
        self.progress = progress or (lambda stage, done, total: None)
        self.timer = StageTimer()
        self.claims = WorkClaims(store)  # documents are shared with other runs on the same index
        self.rebuild_derived = rebuild_derived  # rebuild the derived stages from scratch, not from what changed

    @property
    def window(self) -> int:
        """Documents in flight: enough to keep every LLM slot busy while the head one finishes."""
        concurrency = self.llm.settings.concurrency if self.llm is not None else 1
        return max(MIN_WINDOW_DOCS, self.settings.batch_docs, 4 * concurrency)

    async def run(self, items: Iterable[SourceDocument | Skipped]) -> IndexReport:
        check_embedding_manifest(self.store, self.embedder)
        report = IndexReport()
        if upgraded := await asyncio.to_thread(self.store.upgrade_indexes):
            log.info("index upgraded: %s created", ", ".join(upgraded))
        self.claims.start()
        try:
            with writing(self.store):
                await self._run(items, report)
        except BudgetExceededError as exc:
            report.stopped = str(exc)
            log.warning("indexing stopped: %s; run again to resume", exc)
        finally:
            self.claims.stop()
        report.timings = self.timer.rounded()
        store_timings(self.store, report.timings)
        return report

    async def _run(self, items: Iterable[SourceDocument | Skipped], report: IndexReport) -> None:
        async with EmbedWorker(self.store, self.embedder, self.settings.embed_node_types,
                               lambda d, t: self.progress("embed", d, t)) as worker:
            with self.timer.stage("extract"):
                await self._extract_all(items, report, worker)
            with self.timer.stage("embed entities (tail after extraction)"):
                await worker.flush(entities_only=True)  # the rest goes on beside the derived stages
            # every run finishes the stages for what it committed (one process at a time, in the derived
            # turn; a run that finds them built for the current graph version does nothing), so no
            # commit is left without them when runs end in any order
            await update_derived(self.store, self.embedder, self.settings, report, llm=self.llm,
                                 progress=self.progress, worker=worker, timer=self.timer, force=self.rebuild_derived)
            self.timer.add("embed (worker busy, overlapped)", worker.busy_s)
            report.embedded += worker.embedded

    async def _extract_all(self, items: Iterable[SourceDocument | Skipped], report: IndexReport,
                           worker: EmbedWorker) -> None:
        in_flight: deque[tuple[SourceDocument, asyncio.Task[_DocumentResult]]] = deque()
        ready: list[tuple[SourceDocument, _DocumentResult]] = []  # extracted, in input order, not yet written
        seen_ids: set[str] = set()
        try:
            for group in _groups(items, self.settings.batch_docs):
                for doc in self._admit_all(group, report, seen_ids):
                    if not in_flight and not ready and not report.chunks:  # the index records what extracted it
                        self.store.set_meta("extractor", self.extractor.name)
                    in_flight.append((doc, asyncio.create_task(self._extract_document(doc))))
                    while len(in_flight) >= self.window:
                        await self._finish(*in_flight.popleft(), report, ready)
                        if len(ready) >= self.settings.batch_docs:
                            await self._commit(ready, report, worker)
            while in_flight:
                await self._finish(*in_flight.popleft(), report, ready)
            await self._commit(ready, report, worker)
            async for doc in self.claims.take_over():  # held by another run when met: done there, or left
                if self._needs_processing(doc, report):
                    await self._finish(doc, asyncio.create_task(self._extract_document(doc)), report, ready)
                    await self._commit(ready, report, worker)
                else:
                    self.claims.release_document(doc.id)
        finally:
            for _, task in in_flight:  # a stopped run (budget, endpoint down) leaves nothing running
                task.cancel()
            await asyncio.gather(*(task for _, task in in_flight), return_exceptions=True)
            if ready:  # documents extracted before the stop are kept
                await self._commit(ready, report, worker)
        leftovers = [*self.store.list_documents(DocStatus.PENDING), *self.store.list_documents(DocStatus.PROCESSING)]
        if leftovers:
            log.info("%d documents from an interrupted run need their source again", len(leftovers))

    def _admit_all(self, group: list[SourceDocument | Skipped], report: IndexReport,
                   seen_ids: set[str]) -> list[SourceDocument]:
        """The group's documents that need (re)processing, claimed and recorded as pending in one
        transaction (a commit per document was a third of the time of model-free indexing)."""
        admitted: list[SourceDocument] = []
        with self.store.transaction():
            for item in group:
                if isinstance(item, Skipped):
                    count_skip(report, f"{item.source}: {item.reason}", item.kind)
                    log.warning("skipped %s: %s", item.source, item.reason)
                elif self._admit(item, report, seen_ids):
                    admitted.append(item)
        return admitted

    def _admit(self, doc: SourceDocument, report: IndexReport, seen_ids: set[str]) -> bool:
        """Decide whether a loaded document needs (re)processing; records it as pending if so."""
        if doc.id in seen_ids:
            count_skip(report, f"{doc.source}: duplicate document id {doc.id!r} in this run", DUPLICATE)
            return False
        seen_ids.add(doc.id)
        if not self.claims.take_document(doc):  # another run is on it; taken over at the end if need be
            return False
        if self._needs_processing(doc, report):
            return True
        self.claims.release_document(doc.id)
        return False

    def _needs_processing(self, doc: SourceDocument, report: IndexReport) -> bool:
        digest = content_hash(doc.text, length=32)
        existing = self.store.get_document(doc.id)
        # (the title is part of every passage's text for the encoder and BM25: a new title is an update)
        changed = existing is not None and (existing.content_hash != digest or existing.title != doc.title)
        if existing is not None and not changed and existing.status == DocStatus.DONE:
            report.unchanged += 1
            return False
        if changed:
            self.store.remove_document(doc.id)  # an update: rebuilt from the new text
            report.updated += 1
        twin = self.store.find_document_by_hash(digest)
        if twin is not None and twin.id != doc.id:
            count_skip(report, f"{doc.source}: same content as document {twin.id!r}", DUPLICATE)
            return False
        if existing is None or changed:
            self.store.upsert_document(DocumentRecord(id=doc.id, source=doc.source, title=doc.title,
                                                      content_hash=digest, n_chars=len(doc.text)))
        return True

    async def _extract_document(self, doc: SourceDocument) -> _DocumentResult:
        chunks = chunk_document(doc, self.counter, size=self.settings.chunk_tokens,
                                overlap=self.settings.chunk_overlap)
        result = _DocumentResult(document_records(doc, chunks, await self._summary(doc)), chunks=len(chunks))
        outcomes = await asyncio.gather(*(self._extract_chunk(doc, c) for c in chunks))
        for chunk, outcome in zip(chunks, outcomes, strict=True):
            key = f"{doc.id}::{chunk.id}"
            if isinstance(outcome, GraphRecords):
                result.records.extend(outcome)
                result.done_keys.append(key)
            elif outcome is not None:
                result.failures.append((key, outcome))
                result.chunks_failed += 1
        return result

    async def _finish(self, doc: SourceDocument, task: asyncio.Task[_DocumentResult], report: IndexReport,
                      ready: list[tuple[SourceDocument, _DocumentResult]]) -> None:
        """Wait for one document's extraction; a document whose extraction raised fails alone."""
        try:
            result = await task
        except (BudgetExceededError, LLMUnavailableError, ConfigError):
            raise  # (a missing package or setting is no document's fault: every one would fail the same way)
        except Exception as exc:  # one document's bug or bad input fails that document only
            log.error("document %s failed: %s", doc.id, exc)
            self.store.set_document_status(doc.id, DocStatus.FAILED, f"{type(exc).__name__}: {exc}")
            report.failed += 1
            return
        ready.append((doc, result))

    async def _commit(self, ready: list[tuple[SourceDocument, _DocumentResult]], report: IndexReport,
                      worker: EmbedWorker) -> None:
        """Write the ready documents' records in one transaction (in input order; up to
        ``[index] batch_docs`` of them, so a kill loses at most that many extractions, whose LLM replies
        are cached), then hand their new nodes to the embedding worker."""
        batch = list(ready)
        ready.clear()  # (first: a commit that fails is not tried again by the caller's cleanup)
        if not batch:
            return
        nodes = [n for _, result in batch for n in result.records.nodes]
        existing = {n.id for n in self.store.get_nodes([n.id for n in nodes])}
        with self.store.transaction():  # the batch's records in one call each (one round trip to a server)
            self.store.add_nodes(nodes)
            self.store.add_edges(e for _, result in batch for e in result.records.edges)
            self.store.add_provenance(p for _, result in batch for p in result.records.provenance)
            for doc, result in batch:
                self._write(doc, result, report)
            bump_graph_version(self.store)
            self.claims.finished([doc.id for doc, _ in batch])
        self.progress("documents", report.indexed + report.failed, None)
        new_nodes: dict[str, Node] = {}
        for node in nodes:  # first occurrence wins, as in the store
            if node.id not in existing:
                new_nodes.setdefault(node.id, node)
        await worker.submit(new_nodes.values())

    def _write(self, doc: SourceDocument, result: _DocumentResult, report: IndexReport) -> None:
        """One document's bookkeeping (inside the batch's transaction, after the batch's records)."""
        failed = result.chunks > 0 and result.chunks_failed == result.chunks and self.extractor.uses_llm
        for key in result.done_keys:
            self.store.mark_done(EXTRACT_STAGE, key)
            self.store.clear_failure(EXTRACT_STAGE, key)
        for key, message in result.failures:
            self.store.record_failure(EXTRACT_STAGE, key, message)
        if failed:
            self.store.set_document_status(doc.id, DocStatus.FAILED, "extraction failed for every chunk")
        else:
            self.store.set_document_status(doc.id, DocStatus.DONE)
        report.chunks += result.chunks
        report.extraction_failures += result.chunks_failed
        report.failed += failed
        report.indexed += not failed

    async def _summary(self, doc: SourceDocument) -> str:
        if self.settings.document_summaries in ("auto", "llm") and self.llm is not None:
            try:
                return await llm_summary(self.llm, doc)
            except (BudgetExceededError, LLMUnavailableError):
                raise
            except LLMError as exc:
                self.store.record_failure("document_summary", doc.id, str(exc))
        return first_sentences(doc, self.settings.summary_words)

    async def _extract_chunk(self, doc: SourceDocument, chunk: Chunk) -> GraphRecords | str | None:
        """The chunk's records, a failure message, or None when an earlier run already stored it."""
        key = f"{doc.id}::{chunk.id}"
        if self.store.is_done(EXTRACT_STAGE, key):
            return None
        try:
            extraction = await self.extractor.extract(doc, chunk)
        except (BudgetExceededError, LLMUnavailableError):
            raise  # the run stops; a re-run resumes here
        except LLMError as exc:  # one bad call (malformed output, a refused request) skips one chunk
            log.warning("extraction failed for chunk %d of %s: %s", chunk.index, doc.id, exc)
            return str(exc)
        return extraction_records(chunk, extraction)


def _groups(items: Iterable[SourceDocument | Skipped], size: int) -> Iterator[list[SourceDocument | Skipped]]:
    group: list[SourceDocument | Skipped] = []
    for item in items:
        group.append(item)
        if len(group) >= size:
            yield group
            group = []
    if group:
        yield group
