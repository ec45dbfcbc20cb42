"""Baseline `ircot` (Trivedi et al.): interleave retrieval with chain-of-thought — each new reasoning
sentence becomes the next retrieval query — until the model states the answer or a step limit; then
IRCoT QA's reader answers from every paragraph collected (or, ``reader="cot"``, the chain's own answer
stands)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.run import llm_required_error
from thinkgraph.methods.synthesis import answer_from_evidence, citations_for, numbered_passages
from thinkgraph.models import Answer, AnswerStatus, TraceStep
from thinkgraph.retrieval.dense import DenseRetriever
from thinkgraph.retrieval.evidence import Evidence, ScoredPassage
from thinkgraph.retrieval.graph import GraphRetriever
from thinkgraph.retrieval.hybrid import HybridRetriever

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


class IRCoTConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(4, ge=1)  # IRCoT's step limit; A2RAG's efficiency comparison aligns it with I_max
    k: int = Field(4, ge=1)  # passages retrieved per step
    max_passages: int = Field(12, ge=1)
    # Each step's retriever. IRCoT used BM25 ("bm25"; our BM25 falls back to dense for a query with no
    # indexed term); "ppr" (ours, the default) is the project's strongest shared retrieval, so that the
    # baseline is compared at its best; "dense" is the cosine retriever the earlier default used.
    retriever: Literal["ppr", "bm25", "dense"] = "ppr"
    # The answer. "separate" (IRCoT QA, Trivedi et al. §3.2: the interleaved loop is the retriever, and a
    # reader answers from all the paragraphs it collected; one call more than the loop): the reader is
    # the shared answer step over those paragraphs. "cot" (ours): the answer the chain stated ("So the
    # answer is: ..."), no reader call; a chain that reaches the step limit without one has no answer.
    reader: Literal["separate", "cot"] = "separate"


@dataclass
class IRCoTMethod:
    ctx: MethodContext
    config: IRCoTConfig = field(default_factory=IRCoTConfig)
    name: str = "ircot"

    async def answer(self, question: str) -> Answer:
        llm = self.ctx.llm
        if llm is None:  # (the run envelope says so first)
            raise llm_required_error(self.name)
        c = self.config
        retriever = self._retriever()
        passages: list[ScoredPassage] = []
        seen: set[str] = set()
        trace = self.ctx.trace
        thoughts: list[str] = []
        text: str | None = None
        query = question
        ended = f"no answer within {c.max_steps} steps"
        for _ in range(c.max_steps):
            new = [p for p in retriever.retrieve(query, c.k).passages if p.chunk_id not in seen]
            for p in new[: max(0, c.max_passages - len(passages))]:
                seen.add(p.chunk_id)
                passages.append(p)
            trace.append(TraceStep("retriever", f"retrieve.{c.retriever}", {"query": query},
                                   {"new": [p.chunk_id for p in new]}))
            prompt = REASON_PROMPT.format(passages=numbered_passages(passages, sep="\n"), question=question,
                                          thoughts=" ".join(thoughts) or "(none)")
            reply = await llm.text([{"role": "user", "content": prompt}], step=STEP, kind="action",
                                   stop=NEXT_STEP_STOP)
            thought = first_sentence_block(reply)
            trace.append(TraceStep("reasoner", STEP, {}, {"thought": thought}))
            if echoes_instructions(thought, REASON_PROMPT, window=6) or thought in thoughts:
                # a copy of the instructions, or a repeated thought, retrieves nothing new: the reader reads
                ended = f"the chain repeated {'its instructions' if thought not in thoughts else 'a step'} " \
                        f"after {len(thoughts)} step(s) without an answer"
                break
            if match := _ANSWER.search(thought):
                text = match.group(1).strip().rstrip(".")
                break
            thoughts.append(thought)
            query = thought
        # steps: reasoning steps taken (1: the chain stated its answer at once, so the reader saw one retrieval)
        stats = {"retriever": c.retriever, "reader": c.reader, "chain_answer": text,
                 "steps": len(thoughts) + (text is not None)}
        if c.reader == "separate":
            answer = await answer_from_evidence(llm, question, self.name, Evidence(question, passages), trace)
            answer.stats = stats
            return answer
        status = AnswerStatus.ANSWERED if text and text.casefold() != "unknown" else (
            AnswerStatus.FAILED if text is None else AnswerStatus.ABSTAINED)
        return Answer(question=question, method=self.name, text=text, status=status,
                      citations=citations_for(passages), trace=trace, stats=stats,
                      message=None if text else ended)

    def _retriever(self) -> DenseRetriever | HybridRetriever | GraphRetriever:
        view = self.ctx.view
        if self.config.retriever == "ppr":
            return GraphRetriever(view, self.ctx.settings.retrieval)
        return HybridRetriever(view, dense_weight=0.0) if self.config.retriever == "bm25" else DenseRetriever(view)
