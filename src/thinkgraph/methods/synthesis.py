"""Answering from retrieved passages with numbered citations; shared by the passage-based methods."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.methods.base import NO_LLM_MESSAGE
from thinkgraph.models import Answer, AnswerStatus, Citation, Cost, EvidenceSubgraph, Node, TraceStep
from thinkgraph.retrieval.evidence import Evidence, ScoredPassage
from thinkgraph.tokens import TokenCounter

if TYPE_CHECKING:  # (types only: an LLM-free ask does not load the HTTP client)
    from thinkgraph.llm.service import LLM, Message

ANSWER_STEP = "answer.from_passages"
UNKNOWN = "Unknown"
_CITE = re.compile(r"\[(\d+)\]")
ECHO_MESSAGE = "the model repeated the prompt's instructions instead of answering"
PROMPT_OVERHEAD_TOKENS = 200
T = TypeVar("T")

ANSWER_PROMPT = """Answer the question using only the numbered passages below. Cite the passages you
used with their numbers in square brackets, like [1] or [2][3]. Keep the answer short: a name, a date,
a phrase or one or two sentences. If the passages do not contain the answer, reply exactly "{unknown}".
{paths}
Passages:
{passages}

Question: {question}
Answer:"""


def _paths_block(evidence: Evidence) -> str:
    if not evidence.paths:
        return ""
    lines = "\n".join("- " + " ".join(p) for p in evidence.paths[:5])
    return f"\nEntity paths linking the question to the passages:\n{lines}\n"


def fit_passages(passages: list[ScoredPassage], budget_tokens: int, counter: TokenCounter) -> list[ScoredPassage]:
    """Passages in rank order while they fit the budget (the rest are left out, not cut)."""
    kept: list[ScoredPassage] = []
    used = 0
    for p in passages:
        cost = counter.count(p.text) + 12
        if used + cost > budget_tokens and kept:
            break
        kept.append(p)
        used += cost
    return kept


def split_citations(reply: str, items: Sequence[T]) -> tuple[str, list[T]]:
    """The reply without its [n] markers, and the numbered items it cited (every item when it cited
    none: the answer rests on all it was shown). A number with no item ("[5]" of four passages) is
    dropped from the text too, so no marker is left that points nowhere; the trace keeps the reply."""
    cited = sorted({int(n) for n in _CITE.findall(reply) if 1 <= int(n) <= len(items)})
    text = _CITE.sub("", reply).strip()
    return (text, [items[n - 1] for n in cited]) if cited else (text, list(items))


def missing_citations(reply: str, count: int) -> list[int]:
    """Citation numbers in the reply that name none of the ``count`` items shown."""
    return sorted({int(n) for n in _CITE.findall(reply) if not 1 <= int(n) <= count})


@dataclass(frozen=True, slots=True)
class AnswerReply(Generic[T]):
    """What an answerer's reply says: its status, the text without [n] markers, the items it cited,
    and why it failed when it did."""

    status: AnswerStatus
    text: str | None
    cited: list[T]
    message: str | None = None


def read_answer(reply: str, items: Sequence[T], prompt_template: str) -> AnswerReply[T]:
    """The one reading of an answer reply that every answerer shares: a reply echoing the prompt is a
    failure (the items shown stay cited), "Unknown" an abstention, anything else an answer."""
    if echoes_instructions(reply, prompt_template):
        return AnswerReply(AnswerStatus.FAILED, None, list(items), ECHO_MESSAGE)
    text, cited = split_citations(reply, items)
    abstained = text.strip().strip(".").casefold() == UNKNOWN.casefold()
    return AnswerReply(AnswerStatus.ABSTAINED if abstained else AnswerStatus.ANSWERED, text, cited)


def numbered_passages(passages: Sequence[ScoredPassage], sep: str = "\n\n") -> str:
    return sep.join(f"[{i}] {p.title + ': ' if p.title else ''}{p.text}" for i, p in enumerate(passages, 1))


def citations_for(passages: list[ScoredPassage]) -> list[Citation]:
    return [Citation(doc_id=p.doc_id, chunk_id=p.chunk_id, start=p.start, end=p.end, quote=p.text[:300],
                     score=p.score) for p in passages]


def evidence_subgraph(evidence: Evidence) -> EvidenceSubgraph:
    nodes = [Node(p.chunk_id, "chunk", p.text, {"doc_id": p.doc_id, "score": p.score}) for p in evidence.passages]
    nodes += [Node(eid, "entity", name, {"seed_weight": w}) for eid, name, w in evidence.seeds]
    return EvidenceSubgraph(nodes=nodes, paths=[list(p) for p in evidence.path_ids],
                            path_texts=[" ".join(p) for p in evidence.paths])


def evidence_only(question: str, method: str, evidence: Evidence, trace: list[TraceStep]) -> Answer:
    return Answer(question=question, method=method, text=None, status=AnswerStatus.EVIDENCE_ONLY,
                  citations=citations_for(evidence.passages), evidence=evidence_subgraph(evidence),
                  trace=trace, message=NO_LLM_MESSAGE)


async def answer_from_evidence(llm: LLM, question: str, method: str, evidence: Evidence,
                               trace: list[TraceStep]) -> Answer:
    budget = llm.settings.context_window - llm.settings.max_tokens.answer - PROMPT_OVERHEAD_TOKENS \
        - llm.counter.count(question)
    passages = fit_passages(evidence.passages, budget, llm.counter)
    numbered = numbered_passages(passages)
    messages: list[Message] = [{"role": "user", "content": ANSWER_PROMPT.format(
        unknown=UNKNOWN, paths=_paths_block(evidence), passages=numbered, question=question)}]
    started = time.perf_counter()
    with llm.meter.scope() as cost:
        reply = (await llm.text(messages, step=ANSWER_STEP, kind="answer")).strip()
    trace.append(TraceStep(agent="responder", action=ANSWER_STEP, prompt="ANSWER_PROMPT",
                           inputs={"passages": [p.chunk_id for p in passages],
                                   "left_out": len(evidence.passages) - len(passages)},
                           outputs={"reply": reply, "missing_citations": missing_citations(reply, len(passages))},
                           cost=_copy(cost), seconds=time.perf_counter() - started))
    read = read_answer(reply, passages, ANSWER_PROMPT)
    return Answer(question=question, method=method, text=read.text, status=read.status, message=read.message,
                  citations=citations_for(read.cited), evidence=evidence_subgraph(evidence), trace=trace)


def _copy(cost: Cost) -> Cost:
    return Cost(cost.calls, cost.prompt_tokens, cost.completion_tokens, cost.cached_calls, cost.seconds)
