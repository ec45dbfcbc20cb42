"""Request and response bodies of the service. Answers, nodes, edges and documents are the library's
own dataclasses (typed in OpenAPI as they are); the rest are here."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from thinkgraph.config import DEFAULT_MAX_QUESTION_CHARS
from thinkgraph.index.pipeline import IndexReport
from thinkgraph.methods.catalog import DEFAULT_METHOD
from thinkgraph.models import Citation, DocumentRecord, Edge, EvidenceSubgraph, Node, Provenance, TraceStep

MAX_QUESTION_CHARS = DEFAULT_MAX_QUESTION_CHARS  # the cap of a request; a smaller [ask] max_question_chars also holds


class DocumentIn(BaseModel):
    text: str = Field(min_length=1)
    title: str | None = None


class AskIn(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    method: str = DEFAULT_METHOD
    options: dict[str, Any] = Field(default_factory=dict, description="The method's settings (GET /v1/methods).")
    top_k: int | None = Field(default=None, ge=1, le=100, description="Passages to retrieve, for every method.")
    stream: bool = Field(default=False, description="Server-sent events: started, trace, llm_call, token, "
                         "then answer or error.")


class RetrieveIn(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    method: str = DEFAULT_METHOD
    top_k: int | None = Field(default=None, ge=1, le=100)


class EntityEdit(BaseModel):
    name: str | None = None
    description: str | None = None


class EntityMerge(BaseModel):
    sources: list[str] = Field(min_length=1)
    target: str


class ChatMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatIn(BaseModel):
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(default=None, ge=1)


# responses ------------------------------------------------------------------------------------------
class Health(BaseModel):
    status: Literal["ok"] = "ok"


class MethodSetting(BaseModel):
    name: str
    type: str  # integer | number | boolean | string | enum
    default: Any = None
    choices: list[Any] | None = None
    description: str | None = None


class MethodInfo(BaseModel):
    name: str
    summary: str = Field(description="What the method does, in one line.")
    default: bool = Field(description="Whether this is the method used when none is named.")
    needs_llm: bool
    reads: list[str] = Field(description="What it reads from the index besides passages and entities.")
    settings: list[MethodSetting]


class WorkspaceCreated(BaseModel):
    workspace: str


class WorkspaceStats(BaseModel):
    index: str
    size_bytes: int
    embedding_model: str | None
    embedding_dim: str | None
    extractor: str | None
    documents: dict[str, int]
    nodes: dict[str, int]
    edges: dict[str, int]
    communities_by_level: dict[str, int]
    extraction_failures: dict[str, int]
    llm_usage: dict[str, dict[str, float]]


class Progress(BaseModel):
    stage: str
    done: int
    total: int | None = None


class DocumentOut(BaseModel):
    id: str
    source: str
    title: str
    content_hash: str
    status: str
    error: str | None = None
    n_chars: int = 0
    progress: Progress | None = Field(default=None, description="Indexing progress, while it runs.")

    @classmethod
    def of(cls, record: DocumentRecord, progress: Progress | None = None) -> DocumentOut:
        return cls(id=record.id, source=record.source, title=record.title, content_hash=record.content_hash,
                   status=str(record.status), error=record.error, n_chars=record.n_chars, progress=progress)


class DocumentWritten(BaseModel):
    document: DocumentOut
    report: IndexReport | None = Field(default=None, description="None while indexing runs (wait=false).")


class PassageOut(BaseModel):
    id: str
    text: str
    doc_id: str | None
    title: str | None
    start: int | None
    end: int | None
    page_starts: list[int] = Field(default_factory=list)
    location: str | None = None  # where the passage lies in its file: "slide 2", "sheet 'Sales', rows 2-40"


class NodeOut(BaseModel):
    id: str
    type: str
    text: str
    props: dict[str, Any]
    provenance: list[Provenance] = Field(default_factory=list)
    degree: int | None = None


class Neighbours(BaseModel):
    node: str
    edges: list[Edge]
    nodes: list[Node]


class SearchHit(BaseModel):
    id: str
    type: str
    text: str
    props: dict[str, Any]
    score: float


class Retrieved(BaseModel):
    question: str
    method: str
    citations: list[Citation]
    evidence: EvidenceSubgraph
    trace: list[TraceStep]
    message: str | None = None


class AuditEntry(BaseModel):
    id: int | None = None
    action: str
    payload: dict[str, Any]
    at: str | float | None = None


class ChatMessageOut(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatMessageOut
    finish_reason: Literal["stop", "length"] = "stop"


class ChatUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: ChatUsage


class ModelEntry(BaseModel):
    id: str
    object: Literal["model"] = "model"
    owned_by: str = "thinkgraph"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelEntry]


class ErrorBody(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorOut(BaseModel):
    """Every error, as OpenAI's API shapes it."""

    error: ErrorBody
