"""A method run as a stream of events, each sent as it happens: ``started``; ``trace`` for every step
the moment the method records it (thinkgraph.tracing); ``llm_call`` for every model call
(llm.accounting); ``token`` for answer text as the model streams it; then ``answer`` or ``error``.
The /ask endpoint sends them as server-sent events; the OpenAI-compatible endpoint turns them into
chat-completion chunks. Cancelling the consumer (a client that disconnects) cancels the method."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from thinkgraph.errors import ThinkgraphError
from thinkgraph.llm.accounting import listen, listen_tokens
from thinkgraph.models import Answer, Cost, TraceStep
from thinkgraph.tracing import listen_steps

HEARTBEAT_SECONDS = 15.0  # a comment line keeps proxies from closing a quiet stream


@dataclass(frozen=True, slots=True)
class Event:
    name: str  # started | trace | llm_call | token | answer | error | heartbeat
    data: dict[str, Any]


_END = Event("end", {})  # the run is over; never sent


async def run_events(run: Callable[[], Awaitable[Answer]], started: dict[str, Any], *,
                     redact: Callable[[str], str] = lambda s: s,
                     heartbeat: float = HEARTBEAT_SECONDS) -> AsyncIterator[Event]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Event] = asyncio.Queue()
    count = 0

    def put(event: Event) -> None:  # listeners may be called from worker threads
        loop.call_soon_threadsafe(queue.put_nowait, event)

    def on_step(step: TraceStep) -> None:
        nonlocal count
        put(Event("trace", {"index": count, **dataclasses.asdict(step)}))
        count += 1

    def on_call(step: str, cost: Cost) -> None:
        put(Event("llm_call", {"step": step, "calls": cost.calls, "cached": cost.cached_calls,
                               "prompt_tokens": cost.prompt_tokens, "completion_tokens": cost.completion_tokens}))

    def on_token(step: str, delta: str) -> None:
        put(Event("token", {"step": step, "text": delta}))

    async def body() -> Answer:
        try:
            with listen(on_call), listen_steps(on_step), listen_tokens(on_token):
                return await run()
        finally:
            # through the same callback queue as the events, so it arrives after every one of them: the
            # task itself can finish before the loop has run the callbacks that enqueue its last events
            put(_END)

    task = asyncio.create_task(body())
    getter: asyncio.Future[Event] | None = None  # kept across heartbeats: a cancelled get could drop an event
    yield Event("started", started)
    try:
        while True:
            getter = getter or asyncio.ensure_future(queue.get())
            if not (await asyncio.wait({getter}, timeout=heartbeat))[0]:
                yield Event("heartbeat", {})
                continue
            event, getter = getter.result(), None
            if event is _END:
                break
            yield event
        await asyncio.wait({task})
        try:
            answer = task.result()
        except ThinkgraphError as exc:
            yield Event("error", {"message": redact(str(exc)), "type": type(exc).__name__})
            return
        yield Event("answer", json.loads(redact(json.dumps(answer.to_dict(), default=str))))
    finally:
        if getter is not None:
            getter.cancel()
        if not task.done():
            task.cancel()


def sse(event: Event) -> str:
    if event.name == "heartbeat":
        return ": heartbeat\n\n"
    return f"event: {event.name}\ndata: {json.dumps(event.data, ensure_ascii=False, default=str)}\n\n"
