"""Baseline `none`: the LLM answers from its own knowledge, with no retrieval."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from thinkgraph.llm.service import Message
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.replies import UNKNOWN, answer_trace, ask_answer
from thinkgraph.methods.run import llm_required_error
from thinkgraph.models import Answer

NONE_STEP = "answer.closed_book"
CLOSED_BOOK_PROMPT = """Answer the question from your own knowledge.

Question: {question}

Reply with one line: "Answer: " followed by the answer itself (a name, a date, a number or a short
phrase). If you do not know, reply "Answer: {unknown}"."""


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
        messages: list[Message] = [{"role": "user", "content": CLOSED_BOOK_PROMPT.format(
            question=question, unknown=UNKNOWN)}]
        nothing: list[str] = []  # closed book: no numbered items to cite
        asked = await ask_answer(llm, messages, nothing, step=NONE_STEP, prompt_template=CLOSED_BOOK_PROMPT)
        self.ctx.trace.append(answer_trace("responder", NONE_STEP, "CLOSED_BOOK_PROMPT", asked, {}, 0))
        read = asked.read
        return Answer(question=question, method=self.name, text=read.text, status=read.status, message=read.message,
                      trace=self.ctx.trace)
