"""Data that crosses module lines: graph records, documents, answers and their costs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class NodeType(StrEnum):
    DOCUMENT = "document"
    CHUNK = "chunk"
    PROPOSITION = "proposition"
    TRIPLET = "triplet"
    ENTITY = "entity"
    COMMUNITY = "community"


class EdgeType(StrEnum):
    PART_OF = "PART_OF"  # chunk -> document
    MENTIONED_IN = "MENTIONED_IN"  # triplet -> chunk
    OPENREL = "OPENREL"  # entity -> entity, predicate in props
    CONTAINS = "CONTAINS"  # chunk -> entity (entity occurs in the chunk)
    CO_OCCURS = "CO_OCCURS"  # entity -> entity, model-free extractor
    MENTIONS = "MENTIONS"  # proposition -> entity
    FROM = "FROM"  # proposition -> chunk
    SUMMARY_FOR = "SUMMARY_FOR"  # community -> entity
    CHILD_OF = "CHILD_OF"  # community -> community
    SYNONYM = "SYNONYM"  # entity -> entity


# Edges recomputed from the whole graph rather than supported by one document.
DERIVED_EDGE_TYPES = frozenset({EdgeType.SYNONYM, EdgeType.SUMMARY_FOR, EdgeType.CHILD_OF})


class AnswerStatus(StrEnum):
    ANSWERED = "answered"
    ABSTAINED = "abstained"  # the method says the evidence does not answer the question ("Unknown", a gate)
    FAILED = "failed"  # the model's replies could not be used (the message says why)
    TRUNCATED = "truncated"  # the answer reached the completion cap: its text is kept, but it may be cut
    EVIDENCE_ONLY = "evidence_only"  # no LLM: the retrieved evidence without an answer


class DocStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    type: str
    text: str
    props: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    type: str
    weight: float = 1.0
    props: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Ties a node or edge (item_id) to the document and chunk span that support it."""

    item_id: str
    doc_id: str
    chunk_id: str | None = None
    start: int | None = None
    end: int | None = None


@dataclass(slots=True)
class DocumentRecord:
    id: str
    source: str
    title: str
    content_hash: str
    status: DocStatus = DocStatus.PENDING
    error: str | None = None
    n_chars: int = 0


@dataclass(frozen=True, slots=True)
class Part:
    """A place in a converted file that a reader can find again (a slide, a sheet, a chapter, a section)
    and the offset where its text starts in the document's text. ``rows``: for a table, the offset of
    each row kept and that row's number in the file (a spreadsheet's row 7 is row 7 wherever it lands)."""

    start: int
    label: str  # "slide 3", "sheet 'Sales'", "chapter 2 'The Keeper'", "section 'Results'"; "" for a bare table
    rows: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """A document as loaded from disk, before indexing."""

    id: str
    title: str
    text: str
    source: str
    page_starts: tuple[int, ...] = ()  # PDF: character offset where each page starts
    parts: tuple[Part, ...] = ()  # slides, sheets, chapters, sections: where each starts (converted files)


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    doc_id: str
    text: str
    start: int
    end: int
    n_tokens: int
    index: int


@dataclass(slots=True)
class Proposal:
    """A candidate triple awaiting human review (A2RAG's human-in-the-loop queue)."""

    question: str
    subject: str
    predicate: str
    object: str
    chunk_id: str
    doc_id: str
    status: str = "pending"  # pending | approved | rejected
    id: int | None = None


@dataclass(slots=True)
class Citation:
    doc_id: str
    chunk_id: str
    start: int | None
    end: int | None
    quote: str
    score: float | None = None
    page: int | None = None  # 1-based page of ``start`` for paged documents (PDF)
    # Where in the file the quote is, as a reader looks for it: "slide 3", "sheet 'Sales', rows 4-6",
    # "chapter 2 'The Keeper'", "page 4" (None for plain text)
    location: str | None = None
    # The quote as a reader sees it, without Markdown's marks ("**bold**", "# "); ``quote`` keeps the
    # document's own characters at start-end
    plain_quote: str | None = None


@dataclass(slots=True)
class Cost:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    seconds: float = 0.0
    # Prompt tokens the server evaluated, where it reports them (llama.cpp's timings.prompt_n): a prompt
    # whose prefix the server kept from the previous request costs only the rest. 0: not reported.
    prompt_tokens_read: int = 0

    def add(self, other: Cost) -> None:
        self.prompt_tokens_read += other.prompt_tokens_read
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_calls += other.cached_calls
        self.seconds += other.seconds

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(slots=True)
class TraceStep:
    agent: str
    action: str
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None
    cost: Cost = field(default_factory=Cost)
    seconds: float = 0.0


@dataclass(slots=True)
class EvidenceSubgraph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    paths: list[list[str]] = field(default_factory=list)  # node ids along each path
    path_texts: list[str] = field(default_factory=list)  # the same paths, readable


@dataclass(slots=True)
class Answer:
    question: str
    method: str
    text: str | None
    status: AnswerStatus
    citations: list[Citation] = field(default_factory=list)
    evidence: EvidenceSubgraph = field(default_factory=EvidenceSubgraph)
    trace: list[TraceStep] = field(default_factory=list)
    cost: Cost = field(default_factory=Cost)
    message: str | None = None
    # Method-specific figures for evaluation reports (a2rag stage, tog3 rounds, topg anchors, kgr outcome).
    stats: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
