"""A method run as a stream of events, each sent as it happens: ``started``; ``trace`` for every step
the moment the method records it (thinkgraph.tracing); ``llm_call`` for every model call
(llm.accounting); ``token`` for answer text as the model streams it; then ``answer`` or ``error``.
The /ask endpoint sends them as server-sent events; the OpenAI-compatible endpoint turns them into
chat-completion chunks. Cancelling the consumer (a client that disconnects) cancels the method."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from thinkgraph.errors import ThinkgraphError
from thinkgraph.llm.accounting import listen, listen_tokens
from thinkgraph.llm.structured import strip_reasoning
from thinkgraph.methods.catalog import ANSWER_STEPS
from thinkgraph.methods.replies import answer_so_far, without_markers
from thinkgraph.models import Answer, Cost, TraceStep
from thinkgraph.tracing import listen_steps

HEARTBEAT_SECONDS = 15.0  # a comment line keeps proxies from closing a quiet stream


@dataclass(frozen=True, slots=True)
class Event:
    name: str  # started | trace | llm_call | token | answer | error | heartbeat
    data: dict[str, Any]


_END = Event("end", {})  # the run is over; never sent


async def run_events(run: Callable[[], Awaitable[Answer]], started: dict[str, Any], *,
                     redact: Callable[[str], str] = lambda s: s, hold: Callable[[str], int] = lambda s: 0,
                     heartbeat: float = HEARTBEAT_SECONDS) -> AsyncIterator[Event]:
    """``redact`` masks secrets in what is sent; ``hold(text)``: how much of a streamed text's end may
    still become a secret (it waits for what follows)."""
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

    tokens = RedactedTokens(redact, hold)

    def on_token(step: str, delta: str) -> None:
        for name, text in tokens.feed(step, delta):
            put(Event("token", {"step": name, "text": text}))

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


class RedactedTokens:
    """Token events with known secrets masked: each step's text is redacted as a whole and sent as it
    becomes certain; an end that a secret starts with (``hold``) waits until more follows or another
    step starts, so that a secret split across tokens never goes out in pieces (the answer event,
    redacted too, carries the whole text in any case)."""

    def __init__(self, redact: Callable[[str], str], hold: Callable[[str], int] = lambda text: 0) -> None:
        self.redact, self.hold = redact, hold
        self.step: str | None = None
        self.raw = ""
        self.sent = 0  # characters of the redacted text already sent

    def feed(self, step: str, delta: str) -> list[tuple[str, str]]:
        out = self._flush() if step != self.step and self.step is not None else []
        if step != self.step:
            self.step, self.raw, self.sent = step, "", 0
        self.raw += delta
        masked = self.redact(self.raw)
        ready = max(len(masked) - self.hold(masked), self.sent)
        if ready > self.sent:
            out.append((step, masked[self.sent:ready]))
            self.sent = ready
        return out

    def _flush(self) -> list[tuple[str, str]]:
        masked = self.redact(self.raw)
        rest = masked[self.sent:]
        return [(self.step, rest)] if rest and self.step is not None else []


def sse(event: Event) -> str:
    if event.name == "heartbeat":
        return ": heartbeat\n\n"
    return f"event: {event.name}\ndata: {json.dumps(event.data, ensure_ascii=False, default=str)}\n\n"


# The LLM steps whose streamed reply is a method's final answer: each method's catalog record says
# (methods/catalog.py ``answer_steps``). tests/test_service_openai_stream.py runs each method and checks
# that the text streamed live is its answer.
FINAL_ANSWER_STEPS: Mapping[str, bool] = ANSWER_STEPS
# A tail that may still become a citation marker or a reasoning block: held until the next piece says.
_OPEN_CITE = re.compile(r"\[\d*$")
_OPEN_THINK = re.compile(r"<(?:t(?:h(?:i(?:n(?:k)?)?)?)?)?$", re.IGNORECASE)


class LiveAnswer:
    """The final answer's text while the model writes it: each token of a FINAL_ANSWER_STEPS call,
    cleaned as the method will clean the whole reply (reasoning blocks and citation markers out,
    stripped), gives the text that is certain so far. A chat delta cannot be taken back, so a tail
    that may still change is held, and when the text stops growing from what was sent, the rest
    waits for the answer (``rest``)."""

    def __init__(self, steps: Mapping[str, bool] = FINAL_ANSWER_STEPS, *,
                 redact: Callable[[str], str] = lambda s: s) -> None:
        self.steps = steps
        self.redact = redact  # on the whole text, so that a secret split across tokens is caught too
        self.step: str | None = None
        self.raw = ""
        self.sent = ""
        self.stalled = False

    def feed(self, step: str, piece: str) -> str:
        """The text to send now for a token of ``step`` ("" for other steps' tokens)."""
        if step not in self.steps or self.stalled:
            return ""
        if self.step not in (None, step):  # a second final call in one run: the answer will say
            self.stalled = True
            return ""
        self.step, self.raw = step, self.raw + piece
        shown = self._certain(self.raw)
        if not shown.startswith(self.sent):
            self.stalled = True
            return ""
        new, self.sent = shown[len(self.sent):], shown
        return new

    def _certain(self, raw: str) -> str:
        held = _OPEN_THINK.search(raw)
        raw = raw[: held.start()] if held else raw
        text = answer_so_far(strip_reasoning(raw))  # the "Answer:" line, not the reasoning before it
        if self.steps.get(self.step or "", False):
            held = _OPEN_CITE.search(text)
            text = without_markers(text[: held.start()] if held else text)
        return self.redact(text.strip())

    def rest(self, text: str) -> str | None:
        """What completes the answer ``text`` after what was sent; None when nothing was sent. When the
        answer is not what was streamed (a reply the method refused, as an echo of the prompt), the
        answer follows on a new paragraph."""
        if not self.sent:
            return None
        if text.startswith(self.sent):
            return text[len(self.sent):]
        if self.sent.startswith(text):  # the method cut the reply (a server that ignored max_tokens)
            return ""
        return "\n\n" + text
