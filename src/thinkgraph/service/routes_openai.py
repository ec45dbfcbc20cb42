"""An OpenAI-compatible chat endpoint, so that chat front ends can use a method as a model: the model
name is ``WORKSPACE/METHOD`` (or ``METHOD`` for the workspace "default"); the last user message is
the question; the reply is the answer with numbered sources."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from thinkgraph.errors import InputError
from thinkgraph.methods.registry import METHOD_NAMES
from thinkgraph.models import Answer
from thinkgraph.service.routes_api import workspaces
from thinkgraph.service.schemas import ChatIn

router = APIRouter(prefix="/v1")
DEFAULT_WORKSPACE = "default"


def split_model(model: str) -> tuple[str, str]:
    name = model.removeprefix("thinkgraph/")
    ws, _, method = name.rpartition("/")
    if method not in METHOD_NAMES:
        raise InputError(f"unknown model {model!r}: use WORKSPACE/METHOD with METHOD one of {', '.join(METHOD_NAMES)}")
    return ws or DEFAULT_WORKSPACE, method


def reply_text(answer: Answer) -> str:
    text = answer.text or answer.message or "No answer."
    sources = [f"[{i}] {c.doc_id}{f' p. {c.page}' if c.page else ''}: {c.quote[:160]}"
               for i, c in enumerate(answer.citations, 1)]
    return text + ("\n\nSources:\n" + "\n".join(sources) if sources else "")


def _question(body: ChatIn) -> str:
    for message in reversed(body.messages):
        if message.role == "user" and message.content:
            if isinstance(message.content, str):
                return message.content
            return " ".join(part.get("text", "") for part in message.content if part.get("type") == "text")
    raise InputError("no user message with text")


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    names = [f"{ws}/{m}" for ws in workspaces(request).names() for m in METHOD_NAMES]
    return {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "thinkgraph"} for n in names]}


@router.post("/chat/completions", response_model=None)
async def chat(request: Request, body: ChatIn) -> dict[str, Any] | StreamingResponse:
    ws, method = split_model(body.model)
    answer = await workspaces(request).get(ws).aask(_question(body), method)
    content = reply_text(answer)
    ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    if body.stream:
        return StreamingResponse(_chunks(ident, created, body.model, content), media_type="text/event-stream")
    return {"id": ident, "object": "chat.completion", "created": created, "model": body.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": answer.cost.prompt_tokens, "completion_tokens": answer.cost.completion_tokens,
                      "total_tokens": answer.cost.prompt_tokens + answer.cost.completion_tokens}}


def _chunks(ident: str, created: int, model: str, content: str) -> Iterator[str]:
    base = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
    for delta, finish in (({"role": "assistant", "content": content}, None), ({}, "stop")):
        yield f"data: {json.dumps({**base, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': finish}]})}\n\n"
    yield "data: [DONE]\n\n"
