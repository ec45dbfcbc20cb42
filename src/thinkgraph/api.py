"""Python API: open or create an index, add or remove documents, ask with any method."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator, Sequence, Sized
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thinkgraph.asyncutil import run_sync
from thinkgraph.errors import IncompleteIndexError, IndexFileError, NotFoundError
from thinkgraph.methods.catalog import DEFAULT_METHOD
from thinkgraph.models import Answer, Cost, Node, NodeType, SourceDocument

# Everything else is imported where it is used: `import thinkgraph.api` (and so `thinkgraph --help`)
# stays cheap, and `ask` loads neither the indexing pipeline nor igraph.
if TYPE_CHECKING:
    from thinkgraph.config import Settings
    from thinkgraph.embed.base import Embedder
    from thinkgraph.index.extract_import import ImportedFacts
    from thinkgraph.index.extractor import Extractor
    from thinkgraph.index.loaders import Skipped
    from thinkgraph.index.pipeline import IndexReport, Progress
    from thinkgraph.llm.backend import ChatBackend
    from thinkgraph.llm.service import LLM
    from thinkgraph.retrieval.views import IndexView
    from thinkgraph.store.base import GraphStore, RemovalReport
    from thinkgraph.typedkg.importing import KGImportReport

__all__ = ["DEFAULT_INDEX", "DEFAULT_METHOD", "ThinkGraph"]

DEFAULT_INDEX = "thinkgraph.db"


def _noting_skips(items: Iterable[SourceDocument | Skipped], into: list[Skipped]) -> Iterator[SourceDocument | Skipped]:
    """``items`` as they come, with each skipped one also added to ``into``."""
    for item in items:
        if not isinstance(item, SourceDocument):
            into.append(item)
        yield item


class ThinkGraph:
    """One index plus the models that serve it. ``path`` is an SQLite file or a PostgreSQL URL
    (``postgresql://user@host/db?schema=NAME``; see docs/stores.md).

    ``backend`` replaces the HTTP LLM backend (tests plug the scripted double in here);
    ``embedder`` replaces the configured embedder.
    """

    def __init__(self, path: str | Path = DEFAULT_INDEX, *, settings: Settings | None = None,
                 create: bool | None = None, backend: ChatBackend | None = None,
                 embedder: Embedder | None = None) -> None:
        """``create``: True makes the index file when it is missing, False refuses a missing file, and
        None (the default) makes it on the first write (indexing), so that asking a mistyped path
        is an error rather than an empty answer from a new, empty index."""
        from thinkgraph.config import load_settings
        from thinkgraph.store.factory import index_exists, open_store
        from thinkgraph.tokens import TokenCounter

        self.settings = settings or load_settings()
        self._location = path
        self._store: GraphStore | None = None
        if create or create is False or index_exists(path):
            self._store = open_store(path, create=bool(create))
        self._backend = backend
        self._embedder = embedder
        self.counter = TokenCounter()
        self._generation = self._changes_seen() if self._store else None

    @property
    def store(self) -> GraphStore:
        if self._store is None:  # the first write to an index that did not exist yet
            from thinkgraph.store.factory import open_store

            self._store = open_store(self._location, create=True)
            self._generation = self._changes_seen()
        return self._store

    def _require_index(self) -> None:
        from thinkgraph.store.factory import index_exists, shown_location

        if self._store is None and not index_exists(self._location):
            raise IndexFileError(f"no index at {shown_location(self._location)}; build one with `thinkgraph index` "
                                 "(or pass create=True to start an empty one)")

    @classmethod
    def open(cls, path: str | Path = DEFAULT_INDEX, **kwargs: Any) -> ThinkGraph:
        return cls(path, create=False, **kwargs)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> ThinkGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # models ---------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from thinkgraph.embed.factory import make_embedder

            self._embedder = make_embedder(self.settings.embedding)
        return self._embedder

    @cached_property
    def llm(self) -> LLM | None:
        if self._backend is None and not self.settings.llm.configured:
            return None
        from thinkgraph.llm.accounting import UsageMeter
        from thinkgraph.llm.service import LLM

        # A read-only index answers questions but keeps nothing: no cache, usage or negotiated form.
        writable = not self.store.read_only
        meter = UsageMeter(self.settings.llm.budget_calls, self.settings.llm.budget_tokens,
                           sink=self._persist_usage if writable else None)
        keep = self.store if writable else None
        if self._backend is not None:
            return LLM(self._backend, settings=self.settings.llm, cache=keep, meter=meter,
                       counter=self.counter, memory=keep)
        return LLM.from_settings(self.settings.llm, cache=keep, meter=meter, counter=self.counter, memory=keep)

    def _persist_usage(self, step: str, cost: Cost) -> None:
        self.store.record_usage(step, cost.calls, cost.prompt_tokens, cost.completion_tokens, cost.seconds)

    @cached_property
    def view(self) -> IndexView:
        from thinkgraph.cachedir import cache_root
        from thinkgraph.retrieval.view_cache import ViewCache
        from thinkgraph.retrieval.views import IndexView

        cache = ViewCache.for_store(self.store, cache_root("views")) if self.settings.index.view_cache else None
        return IndexView(self.store, self.embedder, ann_threshold=self.settings.embedding.ann_threshold, cache=cache)

    # indexing ---------------------------------------------------------------------
    def make_extractor(self, name: str | None = None, *, openie: str | Path | None = None,
                       triples: Sequence[str | Path] = ()) -> Extractor:
        from thinkgraph.index.extractors import ExtractorRequest, make_extractor

        # the model only for the extractors that use one (building it reads the endpoint settings)
        llm = self.llm if (name or ("import" if openie else self.settings.index.extractor)) in ("llm", "propositions") \
            else None
        return make_extractor(name, ExtractorRequest(self.settings.index, llm, openie, triples))

    async def aindex(self, paths: Sequence[str | Path] = (), *, extractor: str | None = None,
                     openie: str | Path | None = None, triples: Sequence[str | Path] = (),
                     documents: Iterable[SourceDocument] = (), progress: Progress | None = None,
                     rebuild_derived: bool = False) -> IndexReport:
        """``rebuild_derived``: rebuild synonyms and communities from the whole graph instead of
        updating them with what changed."""
        from thinkgraph.index.extractors import imported_facts, triple_documents
        from thinkgraph.index.loaders import MALFORMED, load_paths
        from thinkgraph.index.pipeline import Indexer
        from thinkgraph.index.report import count_skip, index_call_counts, kept_extractor, record_llm_calls
        from thinkgraph.index.skiplog import record_skipped

        if extractor is None and triples and not paths and isinstance(documents, Sized) and not len(documents):
            extractor = "import"  # only triples, no document to extract: an imported graph, as with --openie
        ex = self.make_extractor(extractor, openie=openie, triples=triples)
        recorded = self.store.get_meta("extractor")  # (the run records its own once it extracts a document)
        s = self.settings.index
        items: list[Iterable[SourceDocument | Skipped]] = [documents]
        skipped: list[Skipped] = []  # the files of ``paths`` not indexed, kept in the index for `documents --skipped`
        if paths:
            items.append(_noting_skips(load_paths(paths, include=s.include, exclude=s.exclude,
                                                  max_bytes=s.max_file_bytes, index_file=self.store.path), skipped))
        items.append(triple_documents(ex, triples))
        indexer = Indexer(self.store, self.embedder, ex, s, llm=self.llm, counter=self.counter, progress=progress,
                          rebuild_derived=rebuild_derived)
        calls_before = index_call_counts(self.llm.meter.steps) if self.llm is not None else {}
        report = await indexer.run(item for group in items for item in group)
        if paths and not report.stopped:
            record_skipped(self.store, paths, skipped)
        report.extractor, report.extractor_kept = ex.name, kept_extractor(recorded, ex.name, report.unchanged)
        if self.llm is not None:  # the calls the run made (summaries too, which no flag asked for): said
            record_llm_calls(report, calls_before, index_call_counts(self.llm.meter.steps))
        facts = imported_facts(ex)
        if facts is not None:
            for line in facts.skipped:
                count_skip(report, line, MALFORMED)
            for line in self._unplaced_facts(facts):
                count_skip(report, line, "no such document")
        self.mark_changed()  # the graph changed (also for other processes sharing the index)
        report.timings.update(await asyncio.to_thread(self._prepare_view))
        return report

    def skipped_files(self) -> list[Skipped]:
        """The files the runs on this index skipped, with their reasons (the latest run per folder)."""
        from thinkgraph.index.skiplog import skipped_files

        self._require_index()
        return skipped_files(self.store)

    def _prepare_view(self) -> dict[str, float]:
        """Build the retrieval view of the index as it now is ([index] prepare_view); its seconds."""
        s = self.settings.index
        if s.view_cache and not self.store.read_only and self.store.change_position() is None:
            # from here on the index logs what each change touches, for the next revision's view to follow
            self.store.log_changes()
            self.__dict__.pop("view", None)  # (a view made before the log began knows no position)
        if not (s.view_cache and s.prepare_view):
            return {}
        started = time.perf_counter()
        self.view.prepare()
        return {"retrieval view (vectors, HNSW, BM25, graph)": round(time.perf_counter() - started, 3)}

    def _unplaced_facts(self, facts: ImportedFacts) -> list[str]:
        """Imported facts whose document is not in the index: said, rather than silently dropped."""
        missing = {doc_id: len(ext.triples) for doc_id, ext in facts.by_doc.items()
                   if self.store.get_document(doc_id) is None}
        if not missing:
            return []
        names = ", ".join(list(missing)[:5]) + (" ..." if len(missing) > 5 else "")
        return [f"{sum(missing.values())} imported triple(s) name {len(missing)} document(s) not in the index "
                f"({names}); index those documents in the same run (their ids must match the file's doc_id column)"]

    def index(self, paths: Sequence[str | Path] = (), **kwargs: Any) -> IndexReport:
        return run_sync(self.aindex(paths, **kwargs))

    def add_documents(self, documents: Iterable[SourceDocument], **kwargs: Any) -> IndexReport:
        return self.index((), documents=list(documents), **kwargs)

    def remove_document(self, doc_id: str, *, rebuild: bool = True) -> RemovalReport:
        self._require_index()
        from thinkgraph.index.stages import writing
        from thinkgraph.store.claims import DOC, WorkClaims

        with writing(self.store):  # readers wait for the rebuild instead of meeting missing stages
            with WorkClaims(self.store).holding(DOC, doc_id):  # not while an indexing run works on it
                if self.store.get_document(doc_id) is None:
                    raise NotFoundError(f"no document {doc_id!r} in the index")
                report = self.store.remove_document(doc_id)
            if rebuild:
                from thinkgraph.index.pipeline import IndexReport, update_derived

                run_sync(update_derived(self.store, self.embedder, self.settings.index, IndexReport(),
                                        llm=self.llm))
        self.mark_changed()
        if rebuild:
            self._prepare_view()
        return report

    def remove_documents(self, doc_ids: Sequence[str]) -> list[RemovalReport]:
        """Remove several documents, then bring the derived stages up to date once (they follow what
        changed: removing 100 documents costs about what they held, not 100 updates). An id not in the
        index removes nothing: all of them are checked first."""
        self._require_index()
        doc_ids = list(dict.fromkeys(doc_ids))
        unknown = [d for d in doc_ids if self.store.get_document(d) is None]
        if unknown:
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            names = ", ".join(repr(d) for d in unknown[:5]) + more
            raise NotFoundError(f"no document {names} in the index; nothing removed")
        reports: list[RemovalReport] = []
        try:
            for doc_id in doc_ids:
                reports.append(self.remove_document(doc_id, rebuild=False))
        finally:  # an unknown id stops the loop; what was removed before it still gets its stages
            if reports:
                from thinkgraph.index.pipeline import IndexReport, update_derived
                from thinkgraph.index.stages import writing

                with writing(self.store):
                    run_sync(update_derived(self.store, self.embedder, self.settings.index, IndexReport(),
                                            llm=self.llm))
                self.mark_changed()
                self._prepare_view()
        return reports

    def import_kg(self, path: str | Path, *, kind: str = "auto") -> KGImportReport:
        """Import a typed knowledge graph (GRBench graph.json, or typed triples TSV/CSV) as this
        index's typed graph, with a vector index over node texts; replaces an earlier import."""
        from thinkgraph.typedkg.importing import import_typed_graph

        return import_typed_graph(self.store.path, self.embedder, path, kind=kind)

    def edit_entity(self, node_id: str, *, name: str | None = None, description: str | None = None) -> Node:
        from thinkgraph.index.curation import edit_entity

        node = edit_entity(self.store, self.embedder, node_id, name=name, description=description)
        self.mark_changed()
        return node

    def merge_entities(self, sources: list[str], target: str) -> Node:
        from thinkgraph.index.curation import merge_entities

        node = merge_entities(self.store, self.embedder, sources, target)
        self.mark_changed()
        return node

    # asking -------------------------------------------------------------------------
    def refresh(self) -> None:
        """Drop cached views when the index changed since they were made (another process, a service
        worker, or this one: ToG-3's write-back)."""
        generation = self._changes_seen()
        if generation != self._generation:
            self.__dict__.pop("view", None)
            self._generation = generation

    def _changes_seen(self) -> tuple[str | None, str | None]:
        return self.store.get_meta("generation"), self.store.content_revision()

    def mark_changed(self) -> None:
        self.store.increment_meta("generation")  # atomic: no change by another process is lost
        self.refresh()

    async def aretrieve(self, question: str, method: str = DEFAULT_METHOD, *, top_k: int | None = None,
                        **options: Any) -> Answer:
        """The method's evidence without an LLM, even when one is configured."""
        return await self._answer(question, method, top_k, options, use_llm=False)

    async def aask(self, question: str, method: str = DEFAULT_METHOD, *, top_k: int | None = None,
                   **options: Any) -> Answer:
        """``top_k``: passages to retrieve and return, mapped onto the method's own settings (its
        catalog record's ``top_k``); ``options`` are the method's settings."""
        return await self._answer(question, method, top_k, options, use_llm=True)

    async def _answer(self, question: str, method: str, top_k: int | None, options: dict[str, Any], *,
                      use_llm: bool) -> Answer:
        from thinkgraph.index.stages import require_complete, wait_until_complete
        from thinkgraph.methods import catalog
        from thinkgraph.methods.base import MethodContext
        from thinkgraph.methods.run import check_question, run_method
        from thinkgraph.retrieval.citation_places import place_citations

        check_question(question, self.settings.ask.max_question_chars)
        self._require_index()
        record = catalog.get(method)
        config = record.make_config(self.settings, catalog.top_k_options(method, top_k, options))
        if record.retrieves:
            self.embedder.prepare_queries()  # loads while the index view is read
        missing = await wait_until_complete(self.store)  # a document being added by another process (service)
        # never answer from an index whose derived stages are missing, or without communities it reads
        require_complete(self.store, needs_communities=catalog.IndexPart.COMMUNITIES in record.needs(config),
                         missing=missing)
        self.refresh()
        if record.retrieves and not len(self.view.vectors(NodeType.CHUNK).ids):
            self._no_passages(record.name, reads_typed_graph=catalog.IndexPart.TYPED_KG in record.reads)
        ctx = MethodContext(store=self.store, view=self.view, settings=catalog.run_settings(self.settings, options),
                            llm=self.llm if use_llm else None)
        answer = await run_method(record.build(ctx, config), question, top_k=top_k)
        place_citations(answer, self.store)
        return answer

    def ask(self, question: str, method: str = DEFAULT_METHOD, **options: Any) -> Answer:
        return run_sync(self.aask(question, method, **options))

    def retrieve(self, question: str, method: str = DEFAULT_METHOD, **options: Any) -> Answer:
        """The method's evidence without an LLM, even when one is configured."""
        return run_sync(self.aretrieve(question, method, **options))

    def _no_passages(self, method: str, *, reads_typed_graph: bool) -> None:
        """No passage to retrieve: said instead of answering without evidence. Documents without
        passages: an index killed before its first commit, or one whose documents all failed. No
        documents: an empty index, or one that holds an imported typed graph only, which kgr and the KG
        baselines read (they say themselves when there is none)."""
        from thinkgraph.index.statistics import documents_by_status
        from thinkgraph.methods.catalog import CATALOG, IndexPart

        by_status = documents_by_status(self.store)
        if by_status:
            listed = ", ".join(f"{n} {status}" for status, n in sorted(by_status.items()))
            raise IncompleteIndexError(f"the index has no passages to retrieve ({listed}); run `thinkgraph index` "
                                       "with your documents first")
        if reads_typed_graph:
            return
        if self._imported_typed_graph():
            *others, last = [f"-m {r.name}" for r in CATALOG if IndexPart.TYPED_KG in r.reads]
            readers = f"{', '.join(others)} or {last}" if others else last
            raise IncompleteIndexError(f"the index holds no passages for {method} to retrieve, only an imported typed "
                                       f"graph: ask it with {readers} (with an LLM endpoint)")
        raise IncompleteIndexError("the index holds no passages: it has no documents; run `thinkgraph index` with "
                                   "your documents first")

    def _imported_typed_graph(self) -> bool:
        """Whether ``index --kg`` imported a typed graph beside the index (not one built from it)."""
        import json

        from thinkgraph.typedkg.layout import META
        from thinkgraph.typedkg.location import SOURCE_META, typed_graph_path

        try:
            meta = json.loads((typed_graph_path(self.store.path) / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        source = meta.get(SOURCE_META) if isinstance(meta, dict) else None
        return isinstance(source, dict) and source.get("kind") not in (None, "index")

    # inspection -----------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        from thinkgraph.index.statistics import index_stats

        self._require_index()
        return index_stats(self.store)
