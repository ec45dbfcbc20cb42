"""Ask (the answer, or server-sent events while the method runs), retrieval without an LLM, and the
passages citations point into."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from thinkgraph.errors import NotFoundError
from thinkgraph.ids import document_node_id
from thinkgraph.models import Answer
from thinkgraph.service.routes_api import workspaces
from thinkgraph.service.schemas import AskIn, PassageOut, Retrieved, RetrieveIn
from thinkgraph.service.streaming import run_events, sse

router = APIRouter(prefix="/v1/workspaces/{ws}")
EVENTS_DOC: dict[int | str, dict[str, Any]] = {200: {"content": {"text/event-stream": {"schema": {
    "type": "string", "description": "with stream=true: events started, trace (each step as the method records it), "
    "llm_call, token (answer text as the model streams it), then answer (the Answer) or error"}}}}}


@router.post("/ask", response_model=Answer, responses=EVENTS_DOC)
async def ask(request: Request, ws: str, body: AskIn) -> Answer | StreamingResponse:
    tg = workspaces(request).get(ws)
    options = dict(body.options)
    top_k = body.top_k if body.top_k is not None else options.pop("top_k", None)  # one name for every method
    if body.stream:
        events = run_events(lambda: tg.aask(body.question, body.method, top_k=top_k, **options),
                            {"question": body.question, "method": body.method},
                            redact=request.app.state.redact,
                            hold=request.app.state.redact.unsafe_tail)
        return StreamingResponse((sse(e) async for e in events), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return await tg.aask(body.question, body.method, top_k=top_k, **options)


@router.post("/retrieve")
async def retrieve(request: Request, ws: str, body: RetrieveIn) -> Retrieved:
    """The passages and graph evidence a method finds, without asking an LLM."""
    answer = await workspaces(request).get(ws).aretrieve(body.question, body.method, top_k=body.top_k)
    return Retrieved(question=body.question, method=body.method, citations=answer.citations,
                     evidence=answer.evidence, trace=answer.trace, message=answer.message)


@router.get("/passages/{chunk_id:path}")
async def passage(request: Request, ws: str, chunk_id: str) -> PassageOut:
    tg = workspaces(request).get(ws)
    node = tg.store.get_node(chunk_id)
    if node is None or node.type != "chunk":
        raise NotFoundError(f"no passage {chunk_id!r}")
    span = next((p for p in tg.store.provenance(chunk_id) if p.chunk_id == chunk_id), None)
    doc_id = node.props.get("doc_id") or (span.doc_id if span else None)
    doc = tg.store.get_node(document_node_id(doc_id)) if doc_id else None
    return PassageOut(id=chunk_id, text=node.text, doc_id=doc_id, title=node.props.get("title"),
                      start=span.start if span else None, end=span.end if span else None,
                      page_starts=list(doc.props.get("page_starts") or []) if doc else [],
                      location=node.props.get("location"))
