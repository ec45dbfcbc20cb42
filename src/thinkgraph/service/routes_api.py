"""Workspaces, documents (upsert by stable id, delete, status), ask (optionally streamed as
server-sent events) and retrieval without an LLM."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import AsyncIterator
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import StreamingResponse

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import InputError, ThinkgraphError
from thinkgraph.index.formats import parse_document
from thinkgraph.llm.accounting import listen
from thinkgraph.methods.registry import METHOD_NAMES
from thinkgraph.models import Answer, Cost, SourceDocument
from thinkgraph.service.schemas import AskIn, DocumentIn, RetrieveIn
from thinkgraph.service.workspaces import Workspaces

router = APIRouter(prefix="/v1")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")
TOP_K_OPTION = {"naive": "top_k", "ppr": "top_k", "a2rag": "evidence_chunks", "topg": "k", "tog3": "top_k"}


def workspaces(request: Request) -> Workspaces:
    return request.app.state.workspaces


def document_id_from_filename(filename: str) -> str:
    """The base name only (both path syntaxes), with unsafe characters replaced: an uploaded name
    never becomes a path, and is never written to disk."""
    base = PureWindowsPath(PurePosixPath(filename or "").name).name
    cleaned = _SAFE_ID.sub("_", base).strip("._")
    if not cleaned:
        raise InputError(f"file name {filename!r} gives no usable document id")
    return cleaned


def _doc_dict(tg: ThinkGraph, doc_id: str) -> dict[str, Any]:
    record = tg.store.get_document(doc_id)
    if record is None:
        raise InputError(f"no document {doc_id!r} in the workspace")
    return dataclasses.asdict(record)


async def _upsert(request: Request, ws: str, doc: SourceDocument) -> dict[str, Any]:
    spaces = workspaces(request)
    reader = spaces.get(ws)
    async with spaces.lock(ws):
        # a separate connection writes, so that asks on the reader never see a half-written batch
        def write() -> Any:
            with ThinkGraph(reader.store.location, settings=reader.settings, embedder=reader.embedder,
                            backend=reader._backend) as writer:  # noqa: SLF001
                return writer.add_documents([doc])

        report = await asyncio.to_thread(write)
    reader.refresh()
    return {"document": _doc_dict(reader, doc.id), "report": dataclasses.asdict(report)}


@router.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/methods")
async def methods() -> list[str]:
    return list(METHOD_NAMES)


@router.get("/workspaces")
async def list_workspaces(request: Request) -> list[str]:
    return workspaces(request).names()


@router.post("/workspaces/{ws}", status_code=201)
async def create_workspace(request: Request, ws: str) -> dict[str, Any]:
    workspaces(request).get(ws, create=True)
    return {"workspace": ws}


@router.get("/workspaces/{ws}")
async def workspace_stats(request: Request, ws: str) -> dict[str, Any]:
    return workspaces(request).get(ws).stats()


@router.put("/workspaces/{ws}/documents/{doc_id:path}")
async def put_document(request: Request, ws: str, doc_id: str, body: DocumentIn) -> dict[str, Any]:
    doc = SourceDocument(id=doc_id, title=body.title or doc_id, text=body.text, source=f"api:{doc_id}")
    return await _upsert(request, ws, doc)


@router.post("/workspaces/{ws}/documents")
async def upload_document(request: Request, ws: str, file: UploadFile = File(...),
                          doc_id: str | None = Form(default=None)) -> dict[str, Any]:
    name = document_id_from_filename(file.filename or "")
    parsed = parse_document(name, await file.read())
    doc = SourceDocument(id=doc_id or name, title=parsed.title or name, text=parsed.text, source=f"upload:{name}",
                         page_starts=parsed.page_starts)
    return await _upsert(request, ws, doc)


@router.get("/workspaces/{ws}/documents")
async def list_documents(request: Request, ws: str) -> list[dict[str, Any]]:
    return [dataclasses.asdict(d) for d in workspaces(request).get(ws).store.list_documents()]


@router.get("/workspaces/{ws}/documents/{doc_id:path}")
async def get_document(request: Request, ws: str, doc_id: str) -> dict[str, Any]:
    return _doc_dict(workspaces(request).get(ws), doc_id)


@router.delete("/workspaces/{ws}/documents/{doc_id:path}")
async def delete_document(request: Request, ws: str, doc_id: str) -> dict[str, Any]:
    spaces = workspaces(request)
    reader = spaces.get(ws)
    async with spaces.lock(ws):
        def remove() -> Any:
            with ThinkGraph(reader.store.location, settings=reader.settings, embedder=reader.embedder) as writer:
                return writer.remove_document(doc_id)

        report = await asyncio.to_thread(remove)
    reader.refresh()
    return dataclasses.asdict(report)


@router.get("/workspaces/{ws}/passages/{chunk_id:path}")
async def passage(request: Request, ws: str, chunk_id: str) -> dict[str, Any]:
    tg = workspaces(request).get(ws)
    node = tg.store.get_node(chunk_id)
    if node is None or node.type != "chunk":
        raise InputError(f"no passage {chunk_id!r}")
    span = next((p for p in tg.store.provenance(chunk_id) if p.chunk_id == chunk_id), None)
    return {"id": chunk_id, "text": node.text, "doc_id": node.props.get("doc_id"), "title": node.props.get("title"),
            "start": span.start if span else None, "end": span.end if span else None}


@router.post("/workspaces/{ws}/ask", response_model=None)
async def ask(request: Request, ws: str, body: AskIn) -> dict[str, Any] | StreamingResponse:
    tg = workspaces(request).get(ws)
    if body.stream:
        return StreamingResponse(_events(tg, body), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})
    return (await tg.aask(body.question, body.method, **body.options)).to_dict()


@router.post("/workspaces/{ws}/retrieve")
async def retrieve(request: Request, ws: str, body: RetrieveIn) -> dict[str, Any]:
    tg = workspaces(request).get(ws)
    options = {TOP_K_OPTION[body.method]: body.top_k} if body.top_k and body.method in TOP_K_OPTION else {}
    answer = await tg.aretrieve(body.question, body.method, **options)
    return {"question": body.question, "method": body.method, "citations": [dataclasses.asdict(c) for c in
                                                                           answer.citations],
            "evidence": dataclasses.asdict(answer.evidence), "trace": [dataclasses.asdict(s) for s in answer.trace]}


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


async def _events(tg: ThinkGraph, body: AskIn) -> AsyncIterator[str]:
    """Server-sent events while the method runs: started, one llm_call per model call as it happens,
    then every trace step, then the answer (or an error)."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def on_call(step: str, cost: Cost) -> None:
        queue.put_nowait({"step": step, "calls": cost.calls, "cached": cost.cached_calls,
                          "prompt_tokens": cost.prompt_tokens, "completion_tokens": cost.completion_tokens})

    async def run() -> Answer:
        with listen(on_call):
            return await tg.aask(body.question, body.method, **body.options)

    task = asyncio.create_task(run())
    yield _sse("started", {"question": body.question, "method": body.method})
    while not task.done() or not queue.empty():
        getter = asyncio.create_task(queue.get())
        done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            yield _sse("llm_call", getter.result())
        else:
            getter.cancel()
    try:
        answer = task.result()
    except ThinkgraphError as exc:
        yield _sse("error", {"detail": str(exc)})
        return
    for i, step in enumerate(answer.trace):
        yield _sse("trace", {"index": i, **dataclasses.asdict(step)})
    yield _sse("answer", answer.to_dict())
