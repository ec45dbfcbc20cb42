"""Baseline `ircot` (Trivedi et al.): interleave retrieval with chain-of-thought — each new reasoning
sentence becomes the next retrieval query — until the model states the answer or a step limit."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from thinkgraph.errors import ConfigError
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.synthesis import citations_for
from thinkgraph.models import Answer, TraceStep
from thinkgraph.retrieval.dense import DenseRetriever
from thinkgraph.retrieval.evidence import ScoredPassage

STEP = "ircot.reason"
_ANSWER = re.compile(r"so the answer is[:\s]*(.+)", re.IGNORECASE | re.DOTALL)
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")
# A model that runs on starts a new question or passage list; the step ends before it.
NEXT_STEP_STOP = ("\nQuestion:", "\nPassages:")


def first_sentence_block(reply: str) -> str:
    """The next reasoning sentence (IRCoT keeps the first generated sentence), or the whole first line
    when it states the answer."""
    line = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    if _ANSWER.search(line):
        return line
    match = _SENTENCE.match(line)
    return match.group(1) if match else line

REASON_PROMPT = """Answer the question by reasoning step by step over the passages. Write only the
NEXT sentence of the reasoning. When you know the answer, write "So the answer is: <answer>".

Passages:
{passages}

Question: {question}
Reasoning so far: {thoughts}
Next sentence:"""


@dataclass
class IRCoTMethod:
    ctx: MethodContext
    max_steps: int = 4  # IRCoT's step limit; A2RAG's efficiency comparison aligns it with I_max
    k: int = 4  # passages retrieved per step
    max_passages: int = 12
    name: str = "ircot"

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:
            raise ConfigError("method 'ircot' needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")
        started = time.perf_counter()
        retriever = DenseRetriever(self.ctx.view)
        passages: list[ScoredPassage] = []
        seen: set[str] = set()
        trace: list[TraceStep] = []
        thoughts: list[str] = []
        text: str | None = None
        with llm.meter.scope() as cost:
            query = question
            for _ in range(self.max_steps):
                new = [p for p in retriever.retrieve(query, self.k).passages if p.chunk_id not in seen]
                for p in new[: max(0, self.max_passages - len(passages))]:
                    seen.add(p.chunk_id)
                    passages.append(p)
                trace.append(TraceStep("retriever", "retrieve.dense", {"query": query},
                                       {"new": [p.chunk_id for p in new]}))
                numbered = "\n".join(f"[{i}] {p.title + ': ' if p.title else ''}{p.text}"
                                     for i, p in enumerate(passages, 1))
                prompt = REASON_PROMPT.format(passages=numbered, question=question,
                                              thoughts=" ".join(thoughts) or "(none)")
                reply = await llm.text([{"role": "user", "content": prompt}], step=STEP, kind="action",
                                       stop=NEXT_STEP_STOP)
                thought = first_sentence_block(reply)
                trace.append(TraceStep("reasoner", STEP, {}, {"thought": thought}))
                if match := _ANSWER.search(thought):
                    text = match.group(1).strip().rstrip(".")
                    break
                thoughts.append(thought)
                query = thought
        cost.seconds = time.perf_counter() - started
        status = "answered" if text and text.casefold() != "unknown" else ("failed" if text is None else "abstained")
        return Answer(question=question, method=self.name, text=text, status=status,
                      citations=citations_for(passages), trace=trace, cost=cost,
                      message=None if text else f"no answer within {self.max_steps} steps")
