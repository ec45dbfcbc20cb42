"""What both framework adapters share: opening an index, checking a method and its options when an
adapter is made (so a typo fails there, in one line, not at the first question), running the method,
and turning its citations into passages that carry the same metadata in both frameworks."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import install_command
from thinkgraph.ids import document_node_id
from thinkgraph.methods import catalog
from thinkgraph.models import Answer, Citation, Node

if TYPE_CHECKING:
    from thinkgraph.config import Settings
    from thinkgraph.embed.base import Embedder
    from thinkgraph.llm.backend import ChatBackend

# The metadata every passage carries, in both frameworks (docs/python.md).
METADATA_KEYS = ("kind", "doc_id", "title", "chunk_id", "start", "end", "page", "location", "score",
                 "method", "quote")


def require(module: str, extra: str) -> None:
    """A missing framework is one line naming the extra that installs it, not a traceback."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"thinkgraph.integrations.{extra} needs {exc.name or module}: "
                          f"{install_command(extra)}") from None


def open_index(index: ThinkGraph | str | Path, *, settings: Settings | None = None,
               embedder: Embedder | None = None, backend: ChatBackend | None = None) -> ThinkGraph:
    """An open ThinkGraph as it is, or the index at a path or PostgreSQL URL (a missing one is
    thinkgraph's one-line IndexFileError here)."""
    if isinstance(index, ThinkGraph):
        return index
    return ThinkGraph.open(index, settings=settings, embedder=embedder, backend=backend)


@dataclass(frozen=True, slots=True)
class Query:
    """A method with its settings over one index: what an adapter asks with."""

    graph: ThinkGraph
    method: str = catalog.DEFAULT_METHOD
    top_k: int | None = None
    options: Mapping[str, Any] | None = None

    def check(self) -> Query:
        """The method name and the options as the method's settings, checked now (UnknownMethodError,
        ConfigError), so that a retriever is never built for a method that cannot run."""
        record = catalog.get(self.method)
        record.make_config(self.graph.settings, catalog.top_k_options(self.method, self.top_k, self.options or {}))
        return self

    async def retrieve(self, question: str) -> Answer:
        """The method's evidence without an LLM (even when one is configured)."""
        return await self.graph.aretrieve(question, self.method, top_k=self.top_k, **dict(self.options or {}))

    async def ask(self, question: str) -> Answer:
        return await self.graph.aask(question, self.method, top_k=self.top_k, **dict(self.options or {}))


@dataclass(frozen=True, slots=True)
class Passage:
    """One cited passage: its text, its metadata (METADATA_KEYS) and where the passage itself lies in
    its document (the metadata's start and end are the cited sentence's, inside it)."""

    text: str
    metadata: dict[str, Any]
    score: float | None
    chunk_id: str
    passage_start: int | None = None
    passage_end: int | None = None


def passages(graph: ThinkGraph, answer: Answer) -> list[Passage]:
    """The answer's citations as passages, in its order. The text is the whole passage (what a model
    downstream needs as context); start, end and quote are the sentence the citation was narrowed to."""
    if not answer.citations:
        return []
    store = graph.store
    chunks = {n.id: n for n in store.get_nodes(list(dict.fromkeys(c.chunk_id for c in answer.citations)))}
    doc_ids = {c.doc_id for c in answer.citations}
    documents = {n.id: n for n in store.get_nodes([document_node_id(d) for d in sorted(doc_ids)])}
    found = []
    for citation in answer.citations:
        chunk = chunks.get(citation.chunk_id)
        span = _passage_span(graph, citation) if chunk is not None else (None, None)
        found.append(Passage(text=chunk.text if chunk is not None else citation.quote,
                             metadata=_metadata(citation, answer.method, _title(chunk, documents, citation)),
                             score=citation.score, chunk_id=citation.chunk_id,
                             passage_start=span[0], passage_end=span[1]))
    return found


def _title(chunk: Node | None, documents: dict[str, Node], citation: Citation) -> str | None:
    if chunk is not None and chunk.props.get("title"):
        return str(chunk.props["title"])
    document = documents.get(document_node_id(citation.doc_id))
    return str(document.props["title"]) if document is not None and document.props.get("title") else None


def _passage_span(graph: ThinkGraph, citation: Citation) -> tuple[int | None, int | None]:
    span = next((p for p in graph.store.provenance(citation.chunk_id)
                 if p.chunk_id == citation.chunk_id and p.doc_id == citation.doc_id), None)
    return (span.start, span.end) if span is not None else (None, None)


def _metadata(citation: Citation, method: str, title: str | None) -> dict[str, Any]:
    return {"kind": "passage", "doc_id": citation.doc_id, "title": title, "chunk_id": citation.chunk_id,
            "start": citation.start, "end": citation.end, "page": citation.page,
            "location": citation.location, "score": citation.score,
            "method": method, "quote": citation.quote}


def answer_metadata(answer: Answer) -> dict[str, Any]:
    """What an answer says besides its text: status, the method's message, the cited chunks, cost."""
    return {"kind": "answer", "method": answer.method, "status": str(answer.status), "message": answer.message,
            "question": answer.question, "chunk_ids": [c.chunk_id for c in answer.citations],
            "llm_calls": answer.cost.calls, "prompt_tokens": answer.cost.prompt_tokens,
            "completion_tokens": answer.cost.completion_tokens}
