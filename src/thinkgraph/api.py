"""Python API: open or create an index, add or remove documents, ask with any method."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thinkgraph.asyncutil import run_sync
from thinkgraph.errors import ConfigError, IncompleteIndexError, IndexFileError, InputError, NotFoundError
from thinkgraph.models import Answer, Cost, Node, NodeType, SourceDocument, TraceStep

# Everything else is imported where it is used: `import thinkgraph.api` (and so `thinkgraph --help`)
# stays cheap, and `ask` loads neither the indexing pipeline nor igraph.
if TYPE_CHECKING:
    from thinkgraph.config import Settings
    from thinkgraph.embed.base import Embedder
    from thinkgraph.index.extract_import import ImportedFacts
    from thinkgraph.index.extractor import Extractor
    from thinkgraph.index.pipeline import IndexReport, Progress
    from thinkgraph.llm.backend import ChatBackend
    from thinkgraph.llm.service import LLM
    from thinkgraph.retrieval.views import IndexView
    from thinkgraph.store.base import GraphStore, RemovalReport

# The registry's default (tests/test_cli_imports.py checks it): the registry imports every method.
DEFAULT_METHOD = "ppr"

DEFAULT_INDEX = "thinkgraph.db"


class ThinkGraph:
    """One index plus the models that serve it. ``path`` is an SQLite file or a PostgreSQL URL
    (``postgresql://user@host/db?schema=NAME``; see the README's "Choosing a store").

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
            from thinkgraph.embed.base import make_embedder

            self._embedder = make_embedder(self.settings.embedding)
        return self._embedder

    @cached_property
    def llm(self) -> LLM | None:
        if self._backend is None and not self.settings.llm.configured:
            return None
        from thinkgraph.llm.accounting import UsageMeter
        from thinkgraph.llm.service import LLM

        # A read-only index answers questions but keeps nothing: no cache, usage or negotiated form.
        writable = not getattr(self.store, "read_only", False)
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
        from thinkgraph.index.extract_combined import CombinedExtractor
        from thinkgraph.index.extract_import import ImportedFacts, ImportExtractor, load_openie, load_triple_file
        from thinkgraph.index.extract_llm import LLMTripletExtractor
        from thinkgraph.index.extract_nolm import NoLMExtractor, SpacyExtractor
        from thinkgraph.index.extract_propositions import PropositionExtractor

        name = name or ("import" if openie else self.settings.index.extractor)
        if triples and name != "import":  # the file's facts are added to the extractor's work
            return CombinedExtractor(self.make_extractor("import", triples=triples), self.make_extractor(name))
        if name == "nolm":
            return NoLMExtractor(sentence_propositions=self.settings.index.nolm_propositions)
        if name == "spacy":
            return SpacyExtractor(sentence_propositions=self.settings.index.nolm_propositions)
        if name == "llm":
            if self.llm is None:
                raise ConfigError("extractor 'llm' needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")
            return LLMTripletExtractor(self.llm, max_triplets=self.settings.index.max_triplets_per_chunk)
        if name == "propositions":
            if self.llm is None:
                raise ConfigError("extractor 'propositions' needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")
            return PropositionExtractor(self.llm)
        if name == "import":
            facts = load_openie(openie) if openie else ImportedFacts()
            for file in triples:
                extra = load_triple_file(file)
                for doc_id, ext in extra.by_doc.items():
                    facts.by_doc.setdefault(doc_id, type(ext)()).triples.extend(ext.triples)
                facts.skipped.extend(extra.skipped)
            if not openie and not triples:
                raise ConfigError("extractor 'import' needs --openie FILE or --triples FILE")
            return ImportExtractor(facts)
        raise ConfigError(f"unknown extractor {name!r}; valid extractors: llm, propositions, import, nolm, spacy")

    async def aindex(self, paths: Sequence[str | Path] = (), *, extractor: str | None = None,
                     openie: str | Path | None = None, triples: Sequence[str | Path] = (),
                     documents: Iterable[SourceDocument] = (), progress: Progress | None = None) -> IndexReport:
        from thinkgraph.index.extract_combined import CombinedExtractor
        from thinkgraph.index.extract_import import ImportExtractor
        from thinkgraph.index.loaders import Skipped, load_paths
        from thinkgraph.index.pipeline import Indexer

        ex = self.make_extractor(extractor, openie=openie, triples=triples)
        s = self.settings.index
        items: list[Iterable[SourceDocument | Skipped]] = [documents]
        if paths:
            items.append(load_paths(paths, include=s.include, exclude=s.exclude, max_bytes=s.max_file_bytes))
        items.extend(_triple_documents(ex, triples))
        indexer = Indexer(self.store, self.embedder, ex, s, llm=self.llm, counter=self.counter, progress=progress)
        report = await indexer.run(item for group in items for item in group)
        if isinstance(ex, ImportExtractor | CombinedExtractor):
            report.skipped.extend(ex.facts.skipped)
            report.skipped.extend(self._unplaced_facts(ex.facts))
        self.mark_changed()  # the graph changed (also for other processes sharing the index)
        return report

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
        return report

    def import_kg(self, path: str | Path, *, kind: str = "auto") -> KGImportReport:
        """Import a typed knowledge graph (GRBench graph.json, or typed triples TSV/CSV) as this
        index's typed graph, with a vector index over node texts; replaces an earlier import."""
        import time

        from thinkgraph.typedkg import TypedGraphBuilder
        from thinkgraph.typedkg.importers import load_grbench, load_typed_triples
        from thinkgraph.typedkg.location import SOURCE_META, typed_graph_path

        started = time.perf_counter()
        file = Path(path)
        if kind == "auto":
            kind = "grbench" if file.suffix.lower() == ".json" else "triples"
        if kind not in ("grbench", "triples"):
            raise ConfigError(f"unknown graph format {kind!r}; valid: grbench, triples")
        builder = TypedGraphBuilder()
        (load_grbench if kind == "grbench" else load_typed_triples)(file, builder)
        if builder.node_count == 0:
            raise InputError(f"{file}: no nodes found")
        written = builder.write(typed_graph_path(self.store.path), self.embedder,
                                extra_meta={SOURCE_META: {"kind": kind, "file": str(file)}})
        meta = json.loads((written / "meta.json").read_text(encoding="utf-8"))
        return KGImportReport(str(written), meta["nodes"], sum(meta["edges"].values()), builder.skipped,
                              time.perf_counter() - started)

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

    async def aretrieve(self, question: str, method: str = DEFAULT_METHOD, **options: Any) -> Answer:
        """The method's evidence without an LLM, even when one is configured."""
        return await self.aask(question, method, _use_llm=False, **options)

    async def aask(self, question: str, method: str = DEFAULT_METHOD, *, top_k: int | None = None,
                   _use_llm: bool = True, **options: Any) -> Answer:
        """``top_k``: passages to retrieve and return, mapped onto the method's own setting
        (methods.registry.TOP_K_SETTINGS); ``options`` are the method's settings."""
        if not question.strip():
            raise InputError("the question is empty")
        try:
            question.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InputError(f"the question is not valid text (character {exc.start}: a lone surrogate)") from None
        from thinkgraph.citations import focus_answer
        from thinkgraph.index.stages import require_complete, wait_until_complete
        from thinkgraph.methods.base import MethodContext
        from thinkgraph.methods.registry import make_method, top_k_options

        self._require_index()
        if method != "none":
            self.embedder.prepare_queries()  # loads while the index view is read
        missing = await wait_until_complete(self.store)  # a document being added by another process (service)
        # never answer from an index whose derived stages are missing; tog3 also reads communities
        require_complete(self.store, needs_communities=method == "tog3" and options.get("use_communities") is not False,
                         missing=missing)
        self.refresh()
        if method != "none" and not len(self.view.vectors(NodeType.CHUNK).ids):
            self._no_passages()
        ctx = MethodContext(store=self.store, view=self.view, settings=self.settings,
                            llm=self.llm if _use_llm else None)
        before = ctx.llm.describe() if ctx.llm is not None else None
        answer = await make_method(method, ctx, **top_k_options(method, top_k, options)).answer(question)
        if ctx.llm is not None and before is not None:
            answer.trace.append(_llm_step(before, ctx.llm.describe()))
        if answer.status == "answered" and not (answer.text or "").strip():
            answer.status, answer.message = "failed", "the model returned an empty answer"
        if top_k is not None:
            del answer.citations[top_k:]
        chunks = self.store.get_nodes(list(dict.fromkeys(c.chunk_id for c in answer.citations)))
        focus_answer(answer, {n.id: n.text for n in chunks})  # each citation: its best-matching sentence
        self._add_pages(answer)
        self._connect_evidence(answer)
        return answer

    def _connect_evidence(self, answer: Answer, limit: int = 60) -> None:
        """The edges among the evidence nodes, when a method returned nodes without them, so that the
        evidence reads as a subgraph (a chunk and the entities it mentions, relations between them)."""
        nodes = list(dict.fromkeys(n.id for n in answer.evidence.nodes[:limit]))
        if answer.evidence.edges or len(nodes) < 2:
            return
        seen: set[tuple[str, str, str]] = set()
        for edge in self.store.edges_among(nodes):
            key = (edge.src, edge.dst, str(edge.type))
            if key not in seen:
                seen.add(key)
                answer.evidence.edges.append(edge)

    def _add_pages(self, answer: Answer) -> None:
        """Page numbers for citations into paged documents (their page starts are kept on the node)."""
        from thinkgraph.ids import document_node_id
        from thinkgraph.index.formats import page_of

        docs = {c.doc_id for c in answer.citations}
        nodes = {n.props.get("doc_id"): n for n in self.store.get_nodes([document_node_id(d) for d in docs])}
        for citation in answer.citations:
            node = nodes.get(citation.doc_id)
            starts = node.props.get("page_starts") if node else None
            if starts and citation.start is not None:
                citation.page = page_of(starts, citation.start)

    def ask(self, question: str, method: str = DEFAULT_METHOD, **options: Any) -> Answer:
        return run_sync(self.aask(question, method, **options))

    def _no_passages(self) -> None:
        """Documents but no passage to retrieve (an index killed before its first commit, or one whose
        documents all failed): say so instead of answering without evidence. (An index of an imported
        typed graph has no documents: kgr and the KG baselines read the graph.)"""
        by_status: dict[str, int] = {}
        for d in self.store.list_documents():
            by_status[str(d.status)] = by_status.get(str(d.status), 0) + 1
        if not by_status:
            return
        listed = ", ".join(f"{n} {status}" for status, n in sorted(by_status.items()))
        raise IncompleteIndexError(f"the index has no passages to retrieve ({listed}); run `thinkgraph index` "
                                   "with your documents first")

    # inspection -----------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        from thinkgraph.index.stages import graph_version, is_outdated, load_timings, missing_stages
        from thinkgraph.llm.dialects import remembered_forms

        self._require_index()
        docs = self.store.list_documents()
        by_status: dict[str, int] = {}
        for d in docs:
            by_status[str(d.status)] = by_status.get(str(d.status), 0) + 1
        return {
            "index": self.store.describe(),
            "size_bytes": self.store.size_bytes(),
            "embedding_model": self.store.get_meta("embed_model"),
            "embedding_dim": self.store.get_meta("embed_dim"),
            "extractor": self.store.get_meta("extractor"),
            "documents": by_status,
            "nodes": self.store.count_nodes(),
            "edges": self.store.count_edges(),
            "communities_by_level": self._community_levels(),
            "graph_version": graph_version(self.store),
            "missing_stages": missing_stages(self.store),
            "stages_outdated": is_outdated(self.store),
            "stage_timings": load_timings(self.store),
            "extraction_failures": self.store.failure_counts(),
            "llm_usage": self.store.usage_totals(),
            "llm_structured_output": remembered_forms(self.store),
        }

    def _community_levels(self) -> dict[str, int]:
        levels: dict[str, int] = {}
        for node in self.store.iter_nodes("community"):
            key = str(node.props.get("level", 0))
            levels[key] = levels.get(key, 0) + 1
        return dict(sorted(levels.items()))


_LLM_COUNTERS = ("repairs", "parse_failures", "format_refusals", "truncations", "cut_replies")


def _llm_step(before: dict[str, Any], after: dict[str, Any]) -> TraceStep:
    """The model and endpoint a question used, the structured-output form negotiated with it, and how
    many repairs, unusable replies, refused forms and cut prompts the question cost."""
    outputs = {k: v for k, v in after.items() if k not in _LLM_COUNTERS}
    outputs |= {k: after[k] - before[k] for k in _LLM_COUNTERS}
    return TraceStep(agent="llm", action="endpoint", outputs=outputs)


@dataclass(frozen=True, slots=True)
class KGImportReport:
    path: str
    nodes: int
    edges: int
    skipped: int
    seconds: float


def _triple_documents(ex: Extractor, triples: Sequence[str | Path]) -> list[list[SourceDocument]]:
    """Triple files become documents of their own so their facts have provenance."""
    from thinkgraph.index.extract_combined import CombinedExtractor
    from thinkgraph.index.extract_import import ImportExtractor

    if not isinstance(ex, ImportExtractor | CombinedExtractor) or not triples:
        return []
    docs: list[SourceDocument] = []
    for doc_id, ext in ex.facts.by_doc.items():
        if doc_id.startswith("triples:"):
            text = "\n".join(f"{t.subject} {t.predicate} {t.object}." for t in ext.triples)
            docs.append(SourceDocument(id=doc_id, title=doc_id.removeprefix("triples:"), text=text,
                                       source=doc_id.removeprefix("triples:")))
    return [docs]
