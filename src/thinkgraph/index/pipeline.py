"""The indexing run: load -> chunk -> extract -> embed per document batch, then entity resolution
and communities. Every stage is idempotent and keyed by content hash, so an interrupted run
resumes where it stopped and repeats no finished LLM call (the LLM cache covers in-flight ones)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from thinkgraph.config import IndexSettings
from thinkgraph.embed.base import Embedder
from thinkgraph.errors import BudgetExceededError, LLMError, LLMUnavailableError
from thinkgraph.ids import content_hash
from thinkgraph.index.chunking import chunk_document
from thinkgraph.index.communities import build_communities
from thinkgraph.index.embedding_stage import check_embedding_manifest, embed_missing
from thinkgraph.index.extractor import Extractor
from thinkgraph.index.loaders import Skipped
from thinkgraph.index.records import document_records, extraction_records
from thinkgraph.index.resolve import resolve_entities
from thinkgraph.index.summaries import first_sentences, llm_summary
from thinkgraph.llm.service import LLM
from thinkgraph.models import Chunk, DocStatus, DocumentRecord, SourceDocument
from thinkgraph.store.base import GraphStore
from thinkgraph.store.claims import WorkClaims, derived_turn
from thinkgraph.tokens import TokenCounter

log = logging.getLogger(__name__)

EXTRACT_STAGE = "extract"
Progress = Callable[[str, int, int | None], None]  # (stage, done, total)


@dataclass(slots=True)
class IndexReport:
    indexed: int = 0
    unchanged: int = 0
    updated: int = 0
    failed: int = 0
    chunks: int = 0
    extraction_failures: int = 0
    skipped: list[str] = field(default_factory=list)
    synonyms: int = 0
    communities: int = 0
    community_levels: int = 0
    embedded: int = 0
    stopped: str | None = None  # why the run stopped early (budget), if it did


class Indexer:
    def __init__(self, store: GraphStore, embedder: Embedder, extractor: Extractor, settings: IndexSettings,
                 *, llm: LLM | None = None, counter: TokenCounter | None = None,
                 progress: Progress | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.extractor = extractor
        self.settings = settings
        self.llm = llm
        self.counter = counter or TokenCounter()
        self.progress = progress or (lambda stage, done, total: None)
        self.claims = WorkClaims(store)  # documents are shared with other runs on the same index

    async def run(self, items: Iterable[SourceDocument | Skipped]) -> IndexReport:
        check_embedding_manifest(self.store, self.embedder)
        self.store.set_meta("extractor", self.extractor.name)
        report = IndexReport()
        batch: list[SourceDocument] = []
        seen_ids: set[str] = set()
        self.claims.start()
        try:
            for item in items:
                if isinstance(item, Skipped):
                    report.skipped.append(f"{item.source}: {item.reason}")
                    log.warning("skipped %s: %s", item.source, item.reason)
                    continue
                if self._admit(item, report, seen_ids):
                    batch.append(item)
                if len(batch) >= self.settings.batch_docs:
                    await self._process_batch(batch, report)
                    batch = []
            if batch:
                await self._process_batch(batch, report)
            async for doc in self.claims.take_over():  # held by another run when met: done there, or left
                if self._needs_processing(doc, report):
                    await self._process_batch([doc], report)
                else:
                    self.claims.release_document(doc.id)
            # documents left pending or processing by an earlier, interrupted run
            leftovers = [d for d in self.store.list_documents() if d.status in (DocStatus.PENDING,
                                                                                DocStatus.PROCESSING)]
            if leftovers:
                log.info("%d documents from an interrupted run need their source again", len(leftovers))
            if self.claims.others_running():  # the last run to end builds the derived stages
                log.info("another indexing run is still going; it builds synonyms and communities when it ends")
            else:
                await update_derived(self.store, self.embedder, self.settings, report, llm=self.llm,
                                     progress=self.progress)
        except BudgetExceededError as exc:
            report.stopped = str(exc)
            log.warning("indexing stopped: %s; run again to resume", exc)
        finally:
            self.claims.stop()
        return report

    def _admit(self, doc: SourceDocument, report: IndexReport, seen_ids: set[str]) -> bool:
        """Decide whether a loaded document needs (re)processing; records it as pending if so."""
        if doc.id in seen_ids:
            report.skipped.append(f"{doc.source}: duplicate document id {doc.id!r} in this run")
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
        if existing is not None and existing.content_hash == digest and existing.status == DocStatus.DONE:
            report.unchanged += 1
            return False
        if existing is not None and existing.content_hash != digest:
            self.store.remove_document(doc.id)  # an update: rebuilt from the new text
            report.updated += 1
        twin = self.store.find_document_by_hash(digest)
        if twin is not None and twin.id != doc.id:
            report.skipped.append(f"{doc.source}: same content as document {twin.id!r}")
            return False
        if existing is None or existing.content_hash != digest:
            self.store.upsert_document(DocumentRecord(id=doc.id, source=doc.source, title=doc.title,
                                                      content_hash=digest, n_chars=len(doc.text)))
        return True

    async def _process_batch(self, docs: list[SourceDocument], report: IndexReport) -> None:
        results = await asyncio.gather(*(self._process_document(d, report) for d in docs),
                                       return_exceptions=True)
        for doc, result in zip(docs, results, strict=True):
            if isinstance(result, BudgetExceededError | LLMUnavailableError):
                raise result
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                log.error("document %s failed: %s", doc.id, result)
                self.store.set_document_status(doc.id, DocStatus.FAILED, f"{type(result).__name__}: {result}")
                report.failed += 1
        report.embedded += embed_missing(self.store, self.embedder, self.settings.embed_node_types,
                                         lambda d, t: self.progress("embed", d, t))
        self.claims.finished([d.id for d in docs])

    async def _process_document(self, doc: SourceDocument, report: IndexReport) -> None:
        self.store.set_document_status(doc.id, DocStatus.PROCESSING)
        chunks = chunk_document(doc, self.counter, size=self.settings.chunk_tokens,
                                overlap=self.settings.chunk_overlap)
        records = document_records(doc, chunks, await self._summary(doc))
        with self.store.transaction():
            self.store.add_nodes(records.nodes)
            self.store.add_edges(records.edges)
            self.store.add_provenance(records.provenance)
        failures = 0
        for ok in await asyncio.gather(*(self._extract_chunk(doc, c) for c in chunks)):
            failures += not ok
        report.chunks += len(chunks)
        report.extraction_failures += failures
        if chunks and failures == len(chunks) and self.extractor.uses_llm:
            self.store.set_document_status(doc.id, DocStatus.FAILED, "extraction failed for every chunk")
            report.failed += 1
        else:
            self.store.set_document_status(doc.id, DocStatus.DONE)
            report.indexed += 1
        self.progress("documents", report.indexed + report.failed, None)

    async def _summary(self, doc: SourceDocument) -> str:
        if self.settings.document_summaries in ("auto", "llm") and self.llm is not None:
            try:
                return await llm_summary(self.llm, doc)
            except (BudgetExceededError, LLMUnavailableError):
                raise
            except LLMError as exc:
                self.store.record_failure("document_summary", doc.id, str(exc))
        return first_sentences(doc, self.settings.summary_words)

    async def _extract_chunk(self, doc: SourceDocument, chunk: Chunk) -> bool:
        key = f"{doc.id}::{chunk.id}"
        if self.store.is_done(EXTRACT_STAGE, key):
            return True
        try:
            extraction = await self.extractor.extract(doc, chunk)
        except (BudgetExceededError, LLMUnavailableError):
            raise  # the run stops; a re-run resumes here
        except LLMError as exc:  # one bad call (malformed output, a refused request) skips one chunk
            self.store.record_failure(EXTRACT_STAGE, key, str(exc))
            log.warning("extraction failed for chunk %d of %s: %s", chunk.index, doc.id, exc)
            return False
        records = extraction_records(chunk, extraction)
        with self.store.transaction():
            self.store.add_nodes(records.nodes)
            self.store.add_edges(records.edges)
            self.store.add_provenance(records.provenance)
            self.store.mark_done(EXTRACT_STAGE, key)
            self.store.clear_failure(EXTRACT_STAGE, key)
        return True



async def update_derived(store: GraphStore, embedder: Embedder, settings: IndexSettings, report: IndexReport,
                         *, llm: LLM | None = None, force: bool = False, progress: Progress | None = None) -> None:
    """Entity resolution and communities over the whole graph, after any change by any process (or
    when forced); one process at a time, and not again for changes another already built them from."""
    async with derived_turn(store, force=force) as turn:
        if turn.needed:
            await _update_derived(store, embedder, settings, report, llm=llm, force=True, progress=progress)
            turn.built()


async def _update_derived(store: GraphStore, embedder: Embedder, settings: IndexSettings, report: IndexReport,
                          *, llm: LLM | None = None, force: bool = False, progress: Progress | None = None) -> None:
    """Entity resolution and communities over the whole graph, after any change (or when forced)."""
    changed = force or report.indexed or report.updated or store.get_meta("derived_stale") == "1"
    if not changed:
        return
    progress = progress or (lambda stage, done, total: None)
    progress("resolve", 0, None)
    # entity vectors must exist before synonyms are computed
    report.embedded += embed_missing(store, embedder, settings.embed_node_types,
                                     lambda d, t: progress("embed", d, t))
    report.synonyms = resolve_entities(store, settings.synonym_threshold)
    progress("communities", 0, None)
    communities = await build_communities(store, max_cluster_size=settings.max_cluster_size,
                                          seed=settings.leiden_seed,
                                          llm=llm if settings.summarize_communities else None)
    report.communities = communities.communities
    report.community_levels = communities.levels
    report.embedded += embed_missing(store, embedder, settings.embed_node_types,
                                     lambda d, t: progress("embed", d, t))
    store.set_meta("derived_stale", "0")
