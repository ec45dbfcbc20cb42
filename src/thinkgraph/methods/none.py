"""Baseline `none`: the LLM answers from its own knowledge, with no retrieval."""

from __future__ import annotations

import time
from dataclasses import dataclass

from thinkgraph.errors import ConfigError
from thinkgraph.llm.service import Message
from thinkgraph.methods.base import MethodContext
from thinkgraph.models import Answer, TraceStep

NONE_STEP = "answer.closed_book"
CLOSED_BOOK_PROMPT = """Answer the question from your own knowledge. Keep the answer short: a name, a
date, a phrase or one sentence. If you do not know, reply exactly "Unknown".

Question: {question}
Answer:"""


@dataclass
class NoRetrievalMethod:
    ctx: MethodContext
    name: str = "none"

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:
            raise ConfigError("method 'none' needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")
        started = time.perf_counter()
        messages: list[Message] = [{"role": "user", "content": CLOSED_BOOK_PROMPT.format(question=question)}]
        with llm.meter.scope() as cost:
            reply = (await llm.text(messages, step=NONE_STEP, kind="answer")).strip()
        status = "abstained" if reply.strip(".").casefold() == "unknown" else "answered"
        trace = [TraceStep(agent="responder", action=NONE_STEP, prompt="CLOSED_BOOK_PROMPT",
                           outputs={"reply": reply}, cost=cost, seconds=time.perf_counter() - started)]
        cost.seconds = time.perf_counter() - started
        return Answer(question=question, method=self.name, text=reply, status=status, trace=trace, cost=cost)
