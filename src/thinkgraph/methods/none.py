"""Baseline `none`: the LLM answers from its own knowledge, with no retrieval."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from thinkgraph.llm.service import Message
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.run import llm_required_error
from thinkgraph.models import Answer, AnswerStatus, TraceStep

NONE_STEP = "answer.closed_book"
CLOSED_BOOK_PROMPT = """Answer the question from your own knowledge. Keep the answer short: a name, a
date, a phrase or one sentence. If you do not know, reply exactly "Unknown".

Question: {question}
Answer:"""


class NoneConfig(BaseModel):
    """`none` has no settings of its own."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class NoRetrievalMethod:
    ctx: MethodContext
    config: NoneConfig = field(default_factory=NoneConfig)
    name: str = "none"

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:  # (the run envelope says so first; a2rag's out-of-scope fallback calls here directly)
            raise llm_required_error(self.name)
        started = time.perf_counter()
        messages: list[Message] = [{"role": "user", "content": CLOSED_BOOK_PROMPT.format(question=question)}]
        with llm.meter.scope() as cost:
            reply = (await llm.text(messages, step=NONE_STEP, kind="answer")).strip()
        status = AnswerStatus.ABSTAINED if reply.strip(".").casefold() == "unknown" else AnswerStatus.ANSWERED
        self.ctx.trace.append(TraceStep(agent="responder", action=NONE_STEP, prompt="CLOSED_BOOK_PROMPT",
                                        outputs={"reply": reply}, cost=cost, seconds=time.perf_counter() - started))
        return Answer(question=question, method=self.name, text=reply, status=status, trace=self.ctx.trace)
