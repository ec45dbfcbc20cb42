"""An OpenAI-compatible chat endpoint, so that chat front ends can use a method as a model: the model
name is ``WORKSPACE/METHOD`` (or ``METHOD`` for the workspace "default"); the conversation is
condensed into a standalone question; the reply is the answer with numbered sources. ``stream: true``
sends chat-completion chunks: the role, the answer as content deltas (as the model writes them where
the method's final answer is a streamed call, see streaming.FINAL_ANSWER_STEPS; word by word when the
answer is known otherwise), the sources, and the finish reason, with a comment line for every step of
the method while it runs."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from thinkgraph.api import ThinkGraph
from thinkgraph.citations import display_quote
from thinkgraph.errors import InputError
from thinkgraph.methods.catalog import METHOD_NAMES
from thinkgraph.models import Answer
from thinkgraph.service.conversation import standalone_question
from thinkgraph.service.routes_api import workspaces
from thinkgraph.service.schemas import (
    ChatChoice,
    ChatCompletion,
    ChatIn,
    ChatMessageOut,
    ChatUsage,
    ModelEntry,
    ModelList,
)
from thinkgraph.service.security import SecretMask
from thinkgraph.service.streaming import LiveAnswer, run_events

router = APIRouter(prefix="/v1")
DEFAULT_WORKSPACE = "default"
_PIECE = re.compile(r"\S+\s*|\s+")
_WORD = re.compile(r"\s*\S+|\s+$")  # a model's tokens carry their leading space


def split_model(model: str) -> tuple[str, str]:
    name = model.removeprefix("thinkgraph/")
    ws, _, method = name.rpartition("/")
    if method not in METHOD_NAMES:
        raise InputError(f"unknown model {model!r}: use WORKSPACE/METHOD with METHOD one of {', '.join(METHOD_NAMES)}")
    return ws or DEFAULT_WORKSPACE, method


def sources_text(citations: list[dict[str, Any]]) -> str:
    """The numbered sources appended to a reply (citations as JSON objects)."""
    lines = []
    for i, c in enumerate(citations, 1):
        page = f", {c['location']}" if c.get("location") else f" p. {c['page']}" if c.get("page") else ""
        lines.append(f"[{i}] {c['doc_id']}{page}: {display_quote(str(c.get('quote', '')), 160)}")
    return "\n\nSources:\n" + "\n".join(lines) if lines else ""


def reply_text(answer: Answer) -> str:
    return (answer.text or answer.message or "No answer.") + sources_text(answer.to_dict()["citations"])


@router.get("/models")
async def models(request: Request) -> ModelList:
    names = [f"{ws}/{m}" for ws in workspaces(request).names() for m in METHOD_NAMES]
    return ModelList(data=[ModelEntry(id=n) for n in names])


@router.post("/chat/completions", response_model=ChatCompletion, responses={200: {"content": {
    "text/event-stream": {"schema": {"type": "string", "description": "chat.completion.chunk events"}}}}})
async def chat(request: Request, body: ChatIn) -> ChatCompletion | StreamingResponse:
    ws, method = split_model(body.model)
    tg = workspaces(request).get(ws)
    question = await standalone_question(body.messages, tg.llm)
    ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    if body.stream:
        chunks = chat_chunks(tg, question, method, _Base(ident, created, body.model), request.app.state.redact)
        return StreamingResponse(chunks, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
    answer = await tg.aask(question, method)
    usage = ChatUsage(prompt_tokens=answer.cost.prompt_tokens, completion_tokens=answer.cost.completion_tokens,
                      total_tokens=answer.cost.total_tokens)
    return ChatCompletion(id=ident, created=created, model=body.model, usage=usage,
                          choices=[ChatChoice(message=ChatMessageOut(content=reply_text(answer)))])


class _Base:
    def __init__(self, ident: str, created: int, model: str) -> None:
        self.fields = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        data = {**self.fields, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


async def chat_chunks(tg: ThinkGraph, question: str, method: str, base: _Base,
                      redact: SecretMask) -> AsyncIterator[str]:
    """The method's run as chat-completion chunks (server-sent events), each sent when it is known."""
    live = LiveAnswer(redact=redact)
    async for event in run_events(lambda: tg.aask(question, method), {}, redact=redact, hold=redact.unsafe_tail):
        if event.name == "started":
            yield base.chunk({"role": "assistant", "content": ""})
        elif event.name == "token":
            # (the page's /ask stream gets every token; a chat delta cannot be taken back, so only the
            # final answer's tokens are content here: see LiveAnswer)
            for word in _WORD.findall(live.feed(event.data["step"], event.data["text"])):
                yield base.chunk({"content": word})  # (a cached answer arrives as one piece)
        elif event.name in ("trace", "heartbeat"):  # comments: clients ignore them, proxies see traffic
            yield f": {event.data.get('agent', '')} {event.data.get('action', 'working')}\n\n"
        elif event.name == "error":
            yield f"data: {json.dumps({'error': {'message': event.data['message'], 'type': 'server_error'}})}\n\n"
            return
        elif event.name == "answer":
            for piece in _answer_pieces(event.data, live):
                yield base.chunk({"content": piece})
            cost = event.data.get("cost") or {}
            usage = ChatUsage(prompt_tokens=cost.get("prompt_tokens", 0),
                              completion_tokens=cost.get("completion_tokens", 0),
                              total_tokens=cost.get("prompt_tokens", 0) + cost.get("completion_tokens", 0))
            yield base.chunk({}, "stop", usage=usage.model_dump())
    yield "data: [DONE]\n\n"


def _answer_pieces(answer: dict[str, Any], live: LiveAnswer) -> list[str]:
    """What is left to send once the answer is known: the rest of its text (all of it word by word
    when none was streamed live), then the sources."""
    text = answer.get("text") or answer.get("message") or "No answer."
    rest = live.rest(text)
    pieces = _PIECE.findall(text) if rest is None else _WORD.findall(rest)
    sources = sources_text(answer.get("citations") or [])
    return pieces + ([sources] if sources else [])
