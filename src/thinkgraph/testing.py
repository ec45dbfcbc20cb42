"""Test doubles. ``ScriptedBackend`` plugs into the same slot as the real HTTP backend and answers
from a script each test writes; it is not a model and no user setting selects it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from thinkgraph.llm.backend import ChatRequest, ChatResult, DeltaSink

Reply = str | Exception | Callable[[ChatRequest], str]


class ScriptExhaustedError(AssertionError):
    pass


@dataclass
class ScriptedBackend:
    """Replies in order; a reply may be a string, an exception to raise, or a function of the request.
    ``rules`` (substring of any message -> reply) answer first when they match, so a repair re-ask
    of a prompt is answered by the same rule as the prompt."""

    script: list[Reply] = field(default_factory=list)
    rules: list[tuple[str, Reply]] = field(default_factory=list)
    requests: list[ChatRequest] = field(default_factory=list)
    honour_stop: bool = True  # False plays a server that ignores stop sequences

    @classmethod
    def of(cls, replies: Iterable[Reply]) -> ScriptedBackend:
        return cls(script=list(replies))

    async def chat(self, request: ChatRequest, on_delta: DeltaSink | None = None) -> ChatResult:
        self.requests.append(request)
        last = request.messages[-1]["content"] if request.messages else ""
        reply: Reply | None = next(
            (r for needle, r in self.rules if any(needle in m["content"] for m in request.messages)), None)
        if reply is None:
            if not self.script:
                raise ScriptExhaustedError(f"no scripted reply left for call {len(self.requests)}: {last[:120]!r}")
            reply = self.script.pop(0)
        if isinstance(reply, Exception):
            raise reply
        text = reply(request) if callable(reply) else reply
        if self.honour_stop and request.stop:  # as servers do: the reply ends before the first stop string
            cuts = [text.find(s) for s in request.stop if s in text]
            text = text[: min(cuts)] if cuts else text
        if on_delta is not None:  # streamed a word at a time, as servers send deltas
            for piece in re.split(r"(?<= )", text):
                if piece:
                    on_delta(piece)
        return ChatResult(text=text, prompt_tokens=sum(len(m["content"].split()) for m in request.messages),
                          completion_tokens=len(text.split()))
